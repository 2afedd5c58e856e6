"""`setdefault` / `d[k] = v` / `update` in a graph loop body: a key set before the loop (a
setdefault of it inside is a no-op) converts; a key first set inside the loop exists after it
only when the loop ran at least once: the program carries a presence flag for it (a dict a
local name alone holds), or, for a dict the caller can reach, a clear error saying so, naming
the key, the dict and the loop."""
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
        d.setdefault("c", x * 5.0)
        d["c"] = d["c"] + x
        i += 1
    return d["a"], "c" in d, d.get("c", x * 0.0)


def assign_new(x):
    d = {"a": x}
    i = 0
    while i < rt.sum(x):
        d["c"] = x * i
        i += 1
    return d["a"], "c" in d, d.get("c", x * 0.0)


def new_key_np(fn, x):
    n = max(int(np.ceil(x.sum())), 0)
    if n == 0:
        return x, False, x * 0.0
    return x, True, x * 5.0 + x * n if fn is setdefault_new else x * (n - 1)


@pytest.mark.parametrize("fn", [setdefault_new, assign_new])
def test_a_key_first_set_inside_the_loop_exists_where_the_loop_ran(fn):
    """The key's presence is a flag the loop carries (`loop_new_keys`): `in`, `.get` and
    `setdefault` in the body and after the loop follow it, over 0, 1 and 3 trips."""
    static = d2s.to_static(fn)
    for v in ([1.0, 2.0], [0.25, 0.5], [-1.0, -2.0]):
        x = np.asarray(v, np.float32)
        want = new_key_np(fn, x)
        for got in (fn(rt.to_tensor(x)), static(rt.to_tensor(x))):
            assert got[1] is want[1]
            np.testing.assert_allclose(got[0].numpy(), want[0])
            np.testing.assert_allclose(got[2].numpy(), want[2])


def assign_into_argument(x, d):
    i = 0
    while i < rt.sum(x):
        d["c"] = x * i
        i += 1
    return x


def test_a_key_first_set_inside_the_loop_into_an_argument_is_a_precise_error():
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(assign_into_argument)(rt.to_tensor(np.ones(2, "float32")),
                                          {"a": rt.zeros([2])})
    msg = str(info.value)
    assert "adds the key 'c' to the dict d" in msg and "while i < rt.sum(x):" in msg
    assert "only when the loop ran at least once" in msg
    assert "d.setdefault('c', ...)" in msg


def update_new(x):
    d = {"a": x}
    i = 0
    while i < rt.sum(x):
        d.update(c=x * i)
        i += 1
    return d["a"]


def test_update_with_a_new_key_inside_the_loop_is_a_precise_error():
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(update_new)(rt.to_tensor(np.ones(2, "float32")))
    msg = str(info.value)
    assert "d['c'] is first set inside a loop whose condition is a tensor" in msg
    assert "only when the loop ran at least once" in msg
