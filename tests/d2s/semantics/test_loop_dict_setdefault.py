"""`setdefault` / `d[k] = v` / `update` in a graph loop body: a key set before the loop (a
setdefault of it inside is a no-op) converts; a key first set inside the loop exists after it
only when the loop ran at least once: the loop carries its presence flag (`update` too, since
a statement `d.update(...)` is a write of `d`)."""
import numpy as np
import pytest

import d2s
import runtime as rt


class Accumulate(rt.nn.Layer):
    def forward(self, x):
        cache = {}
        cache.setdefault("h", x * 0.0)     # the key exists before the loop
        i = 0
        while i < rt.sum(x):
            cache.setdefault("h", x * 5.0)  # an existing key: a no-op, as in eager code
            cache["h"] = cache["h"] + x
            i += 1
        return cache["h"]


def test_setdefault_of_a_key_set_before_the_loop_converts():
    eager, static = Accumulate(), d2s.to_static(Accumulate())
    for v in ([1.0, 2.0], [0.25, 0.5], [-1.0, -2.0]):   # 3, 1 and 0 iterations
        x = np.asarray(v, np.float32)
        want = x * max(int(np.ceil(x.sum())), 0)
        np.testing.assert_allclose(eager(rt.to_tensor(x)).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), want)


def setdefault_new(x):
    d = {"a": x}
    i = 0
    while i < rt.sum(x):
        d.setdefault("c", x * 5.0)          # the first trip sets it, later ones keep it
        d["c"] = d["c"] + x
        i += 1
    return d.get("c", x * 0.0), "c" in d, len(d)


def assign_new(x):
    d = {"a": x}
    i = 0
    while i < rt.sum(x):
        d["c"] = x * i
        i += 1
    return d.get("c", x * 0.0), "c" in d, len(d)


@pytest.mark.parametrize("fn, first", [(setdefault_new, 5.0), (assign_new, None)])
def test_a_key_first_set_inside_the_loop_converts(fn, first):
    """The key exists after the loop where it ran (a presence flag), as in eager code; a
    setdefault of it sets it on the first trip only."""
    static = d2s.to_static(fn)
    for v in ([1.0, 2.0], [0.25, 0.5], [-1.0, -2.0]):   # 3, 1 and 0 iterations
        x = np.asarray(v, np.float32)
        trips = max(int(np.ceil(x.sum())), 0)
        if first is None:
            want = x * (trips - 1) if trips else x * 0.0
        else:
            want = x * first + x * trips if trips else x * 0.0
        for f in (fn, static):
            got, present, n = f(rt.to_tensor(x))
            np.testing.assert_allclose(got.numpy(), want)
            assert (bool(present), n) == (trips > 0, 1 + (trips > 0))
    assert len(static.program_cache) == 1


def update_new(x):
    d = {"a": x}
    i = 0
    while i < rt.sum(x):
        d.update(c=x * i)
        d.update({"b": x + i})
        i += 1
    return d["a"], "c" in d, len(d), d.get("c", x * 9.0), d.get("b", x * 9.0)


def test_update_with_new_keys_inside_the_loop_follows_the_trips():
    """The keys exist after the loop where it ran (the loop carries their presence flags)."""
    static = d2s.to_static(update_new)
    for v in ([1.0, 2.0], [0.25, 0.5], [-1.0, -2.0]):   # 3, 1 and 0 iterations
        x = np.asarray(v, np.float32)
        trips = max(int(np.ceil(x.sum())), 0)
        last = trips - 1
        want = (x, trips > 0, 1 + 2 * (trips > 0), x * last if trips else x * 9.0,
                x + last if trips else x * 9.0)
        for f in (update_new, static):
            got = f(rt.to_tensor(x))
            assert got[1:3] == want[1:3]
            for k in (0, 3, 4):
                np.testing.assert_allclose(got[k].numpy(), want[k])
    assert len(static.program_cache) == 1
