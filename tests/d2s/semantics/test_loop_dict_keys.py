"""A graph loop's dict state keeps its keys: a body that removes or adds a key is a
`StateChangeError` naming the key, the dict and the loop (it was an internal structure error
of the while op); popping a key and setting it again in the same iteration is fine."""
import re

import numpy as np
import pytest

import d2s
import runtime as rt


def drop_key(x, n):
    d = {"a": x * 1.0, "b": x * 2.0}
    i = 0
    while i < n:
        del d["b"]
        i += 1
    return d


def pop_into_other(x, n):
    state = {"stats": {"sum": x * 0.0, "tmp": x}}
    i = 0
    while i < n:
        state["stats"]["sum"] = state["stats"].pop("tmp") + state["stats"]["sum"]
        i += 1
    return state


def pop_and_reinsert(x, n):
    d = {"h": x * 1.0, "c": x * 0.0}
    i = 0
    while i < n:
        h = d.pop("h")
        d["h"] = h * 0.5 + d["c"]
        d["c"] = d["c"] + 1.0
        i += 1
    return d["h"], d["c"]


@pytest.mark.parametrize("fn,key,where", [(drop_key, "'b'", "d"),
                                          (pop_into_other, "'tmp'", "state['stats']")])
def test_a_loop_that_removes_a_key_names_it(fn, key, where):
    with pytest.raises(d2s.StateChangeError, match=re.escape(
            f"removes the key {key} of the dict {where};") + ".*Keep every key") as info:
        d2s.to_static(fn)(rt.to_tensor(np.ones(2, "float32")), rt.to_tensor(np.array(2)))
    assert "while i < n" in str(info.value)


def test_pop_and_set_again_keeps_the_keys_and_matches_numpy():
    static = d2s.to_static(pop_and_reinsert)
    x = np.array([2.0, -4.0], "float32")
    for n in (0, 1, 3):
        h, c = x.copy(), np.zeros(2, "float32")
        for _ in range(n):
            h, c = h * 0.5 + c, c + 1.0
        for fn in (pop_and_reinsert, static):
            got_h, got_c = fn(rt.to_tensor(x), rt.to_tensor(np.array(n)))
            np.testing.assert_allclose(got_h.numpy(), h)
            np.testing.assert_allclose(got_c.numpy(), c)
    assert len(static.program_cache) == 1
