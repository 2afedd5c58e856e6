"""Dict keys a tensor `if` set on some paths only, changed afterwards by a graph loop through
the dict object rather than a carried name: `d.setdefault(k, v)`, a closure helper's
`d[k] = d.get(k, z) + 1`, `self.stats.setdefault(...)`, an argument's dict; also in nested
loops and a loop inside a tensor `if` (issue 35, dict keys; dict-keys fuzz seed 35805). The
loop carries the key's presence flag, so where no trip ran the key is present exactly where
the `if` set it; `in`, `len`, `.get` and the dict written back to the caller follow it (the
converted call said present on every path: a silent wrong result). Eager vs static vs NumPy
over inputs where the `if` is taken or not and the loops run zero or more trips."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line

INPUTS = [([1.25, 2.75, 0.25], [-0.25, -0.25, 0.25]),   # if taken, loops run
          ([-0.25, -0.25, -1.25], [0.25, -1.25, -1.25]),  # neither
          ([0.75, -2.75, -1.25], [2.25, 0.75, 0.75]),    # neither (negative mean, no trip)
          ([-0.25, 0.75, 1.25], [2.25, 0.75, 0.75]),     # loops only
          ([0.25, -2.75, 3.25], [2.25, 0.75, 0.75])]     # if only


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def trips(x):
    return rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")


def np_trips(xv) -> int:
    return int(np.clip(xv[1] + 1.0, 0.0, 3.0))


def best_of(x, y):
    stats = {}
    if rt.mean(x) > 0.0:
        stats["best"] = x * 2.0
    for _ in range(trips(x)):
        stats.setdefault("best", y * 1.0)
    return len(stats), "best" in stats, stats.get("best", y * 5.0)


def best_of_ref(xv, yv):
    if xv.mean() > 0:
        return 1, True, xv * 2
    if np_trips(xv):
        return 1, True, yv
    return 0, False, yv * 5


def counted(x, y):
    stats = {}
    if rt.mean(x) > 0.0:
        stats["n"] = x * 0.0 + 10.0

    def bump():
        stats["n"] = stats.get("n", y * 0.0) + 1.0
    step = rt.zeros([])
    while step < x[1] + 1.0:
        step = step + 1.0
        bump()
    return len(stats), "n" in stats, stats.get("n", y * 5.0)


def counted_ref(xv, yv):
    n = max(0, int(np.ceil(xv[1] + 1.0)))
    if xv.mean() > 0:
        return 1, True, np.zeros(3, "float32") + 10 + n
    if n:
        return 1, True, np.zeros(3, "float32") + n
    return 0, False, yv * 5


def nested(x, y):
    stats = {}
    if rt.mean(x) > 0.0:
        stats["best"] = x * 2.0
    for _ in range(trips(x)):
        if y.sum() > 0:
            for _ in range(trips(y)):
                stats.setdefault("best", y * 1.0)
    return len(stats), "best" in stats, stats.get("best", y * 5.0)


def nested_ref(xv, yv):
    if xv.mean() > 0:
        return 1, True, xv * 2
    if np_trips(xv) and yv.sum() > 0 and np_trips(yv):
        return 1, True, yv
    return 0, False, yv * 5


def check(fn, ref):
    static = d2s.to_static(fn)
    for xv, yv in INPUTS:
        xv, yv = np.float32(xv), np.float32(yv)
        want = ref(xv, yv)
        for got in (fn(rt.to_tensor(xv), rt.to_tensor(yv)),
                    static(rt.to_tensor(xv), rt.to_tensor(yv))):
            assert got[:2] == want[:2]
            np.testing.assert_allclose(got[2].numpy(), want[2])
    assert len(static.program_cache) == 1


def test_setdefault_in_a_loop_of_a_key_an_if_set_on_some_paths():
    check(best_of, best_of_ref)


def test_a_closure_helper_counting_under_a_key_an_if_set_on_some_paths():
    check(counted, counted_ref)


def test_setdefault_in_a_loop_inside_an_if_inside_a_loop():
    check(nested, nested_ref)


class Monitor:
    def __init__(self):
        self.stats = {}

    def forward(self, x, y, seen):
        if rt.mean(x) > 0.0:
            self.stats["best"] = x * 2.0
            seen["best"] = x * 2.0
        for _ in range(trips(x)):
            self.stats.setdefault("best", y * 1.0)
            seen.setdefault("best", y * 1.0)
        return x * 1.0


def test_dicts_the_caller_holds_are_written_back_with_eager_keys():
    for xv, yv in INPUTS:
        xv, yv = np.float32(xv), np.float32(yv)
        eager, converted = Monitor(), Monitor()
        static = d2s.to_static(converted.forward)
        eager_seen, static_seen = {}, {}
        eager.forward(rt.to_tensor(xv), rt.to_tensor(yv), eager_seen)
        static(rt.to_tensor(xv), rt.to_tensor(yv), static_seen)
        _, present, value = best_of_ref(xv, yv)
        for d in (eager.stats, converted.stats, eager_seen, static_seen):
            assert list(d) == (["best"] if present else [])
            if present:
                np.testing.assert_allclose(d["best"].numpy(), value)


STATS = {}


class Refine(rt.nn.Layer):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x, y):
        for _ in range(trips(x)):
            STATS.setdefault("best", y * self.k)
        return x * self.k


class Picked(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = rt.nn.LayerList([Refine(1.0), Refine(2.0)])

    def forward(self, x, y, i):
        if rt.mean(x) > 0.0:
            STATS["best"] = x * 2.0
        return self.layers[i](x, y)


def test_a_block_that_passes_no_flags_out_is_a_clear_error_at_the_loop():
    static = d2s.to_static(Picked())
    x, y = rt.to_tensor(np.float32([-0.25, -0.25, -1.25])), rt.to_tensor(np.float32([1, 2, 3]))
    with pytest.raises(d2s.ConversionError) as info:
        static(x, y, rt.to_tensor(np.int64(1)))
    text = assert_at_user_line(info.value, __file__, line_of(Refine.forward, "for _ in"))
    assert "STATS['best'] exists only where a tensor `if` set it" in text
    assert not STATS


def first_best(x, y):
    stats = {"x": x}
    for _ in range(trips(x)):
        if y.sum() > 0:
            for _ in range(trips(y)):
                stats.setdefault("best", y * 1.0)
    return len(stats), "best" in stats, stats.get("best", y * 5.0)


def first_best_ref(xv, yv):
    if np_trips(xv) and yv.sum() > 0 and np_trips(yv):
        return 2, True, yv
    return 1, False, yv * 5


def first_count(x, y):
    stats = {}

    def bump():
        stats["n"] = stats.get("n", 0) + 1
    step = rt.zeros([])
    while step < x[1] + 1.0:
        step = step + 1.0
        bump()
    return len(stats), "n" in stats, stats.get("n", -1)


def first_count_ref(xv, yv):
    n = max(0, int(np.ceil(xv[1] + 1.0)))
    return (1, True, n) if n else (0, False, -1)


def test_keys_first_set_by_setdefault_or_a_helper_in_graph_loops():
    check(first_best, first_best_ref)
    static = d2s.to_static(first_count)
    for xv, yv in INPUTS:
        x, y = rt.to_tensor(np.float32(xv)), rt.to_tensor(np.float32(yv))
        want = first_count_ref(np.float32(xv), np.float32(yv))
        for got in (first_count(x, y), static(x, y)):
            assert got == want and type(got[2]) is int  # (a Python int, as eager's)


def track(x, y, seen):
    for _ in range(trips(x)):
        seen.setdefault("best", y * 1.0)
    return x * 1.0


def test_a_key_first_set_in_an_argument_dict_by_a_graph_loop_is_written_back_where_it_ran():
    static = d2s.to_static(track)
    for xv, yv in INPUTS:
        xv, yv = np.float32(xv), np.float32(yv)
        eager_seen, static_seen = {}, {}
        track(rt.to_tensor(xv), rt.to_tensor(yv), eager_seen)
        static(rt.to_tensor(xv), rt.to_tensor(yv), static_seen)
        for d in (eager_seen, static_seen):
            assert list(d) == (["best"] if np_trips(xv) else [])
            if np_trips(xv):
                np.testing.assert_allclose(d["best"].numpy(), yv)


def keys_in_run_order(x, y):
    stats = {}
    for i in range(trips(x)):
        if y.sum() > 3.0 - i * 2.0:
            stats.setdefault("late", y * 1.0)
        stats.setdefault("early", x * 1.0)
    return list(stats)


def test_keys_a_loop_adds_on_trips_the_run_decides_are_not_ordered_silently():
    x, y = rt.to_tensor(np.float32([1.25, 2.75, 0.25])), rt.to_tensor(np.float32([0.75] * 3))
    assert keys_in_run_order(x, y) == ["early", "late"]  # (eager: 'late' on the second trip)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(keys_in_run_order)(x, y)
    text = assert_at_user_line(info.value, __file__, line_of(keys_in_run_order, "return list"))
    assert "reads the order of the keys" in text
