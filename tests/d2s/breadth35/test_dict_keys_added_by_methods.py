"""Dict keys a graph loop adds with a method (issue 35): `d.setdefault(k, v)` and
`d.update({k: v})` / `d.update(k=v)` as statements, in a loop whose condition is a tensor, at
the top level or inside a tensor `if`. The loop carries the dict (as it does for `d[k] = v`),
and the key its presence flag: `in`, `.get`, `len()` and returning the dict follow the run,
and a read where no trip set it is eager's KeyError. (They were refused: "d['c'] is first set
inside a loop whose condition is a tensor".)"""
import numpy as np
import pytest

import d2s
import runtime as rt


def trips(x):
    return rt.cast(rt.clip(x[0], 0.0, 3.0), "int64")


class Memo(rt.nn.Layer):
    """A forward that caches its first projection in a dict it fills in a loop."""

    def __init__(self):
        super().__init__()
        self.scale = 0.5

    def forward(self, x):
        cache = {"x": x}
        if x[1] > 0:
            for i in range(trips(x)):
                cache.setdefault("first", x * self.scale)  # first trip only
                cache.update({"last": x * i})
        return len(cache), "first" in cache, cache.get("first", x * 0.0 - 1.0), \
            cache.get("last", x * 0.0 - 2.0)


def memo_ref(xv):
    n = int(np.clip(xv[0], 0.0, 3.0)) if xv[1] > 0 else 0
    first = xv * 0.5 if n else xv * 0.0 - 1.0
    last = xv * (n - 1) if n else xv * 0.0 - 2.0
    return 1 + 2 * (n > 0), n > 0, first, last


INPUTS = (np.array([2.0, 1.0], "float32"),   # the if, two trips
          np.array([0.0, 1.0], "float32"),   # the if, no trip
          np.array([3.0, -1.0], "float32"))  # not the if


def test_keys_a_graph_loop_adds_by_setdefault_and_update_inside_a_tensor_if():
    eager, static = Memo(), d2s.to_static(Memo(), full_graph=True)
    for xv in INPUTS:
        want = memo_ref(xv)
        for run in (eager, static):
            got = run(rt.to_tensor(xv))
            assert got[:2] == want[:2] and type(got[0]) is int and type(got[1]) is bool
            np.testing.assert_allclose(got[2].numpy(), want[2])
            np.testing.assert_allclose(got[3].numpy(), want[3])
    assert len(static.forward.program_cache) == 1


def count_trips(x):
    stats = {}
    for i in range(trips(x)):
        stats.update(n=stats.get("n", 0) + 1)
    return stats


def read_after(x):
    stats = {}
    for i in range(trips(x)):
        stats.setdefault("seen", x * 2.0)
    return stats["seen"]


def test_a_count_by_update_and_a_read_where_no_trip_set_it():
    counted = d2s.to_static(count_trips, full_graph=True)
    read = d2s.to_static(read_after, full_graph=True)
    for k in (0.0, 1.0, 3.0):
        x = rt.to_tensor([k, 0.0])
        want = {"n": int(k)} if k else {}
        assert count_trips(x) == want and counted(x) == want
        if k:
            np.testing.assert_allclose(read(x).numpy(), [2 * k, 0.0])
        else:
            for run in (read_after, read):
                with pytest.raises(KeyError, match="seen"):
                    run(x)
    assert len(counted.program_cache) == 1 and len(read.program_cache) == 1
