"""A graph loop's dict state whose keys the body removes: the loop carries the key's
presence flag (`loop_new_keys`), so the dict has eager's keys after 0 or 1 trips, and a second
trip's `del` or `pop` raises eager's KeyError naming the key at the user's line (it was a
`StateChangeError` naming the key, the dict and the loop, and an internal structure error of
the while op before that); popping a key and setting it again in the same iteration is fine."""
import traceback

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


@pytest.mark.parametrize("fn,key", [(drop_key, "b"), (pop_into_other, "tmp")])
def test_a_loop_that_removes_a_key_has_eagers_keys(fn, key):
    static = d2s.to_static(fn)
    x = rt.to_tensor(np.array([1.5, -2.0], "float32"))
    for n in (0, 1):
        got, want = static(x, rt.to_tensor(np.array(n))), fn(x, rt.to_tensor(np.array(n)))
        assert type(got) is dict and list(got) == list(want)
        assert repr(got) == repr(want)
    with pytest.raises(KeyError, match=key):
        fn(x, rt.to_tensor(np.array(2)))
    with pytest.raises(KeyError, match=key) as info:
        static(x, rt.to_tensor(np.array(2)))
    shown = "".join(traceback.format_exception_only(info.value))
    assert "test_loop_dict_keys.py" in shown and (f'del d["{key}"]' in shown or
                                                   f'.pop("{key}")' in shown), shown
    assert len(static.program_cache) == 1


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


def drop_int_key(x, n):
    d = {1: x * 1.0, 2: x * 2.0}
    i = 0
    while i < n:
        del d[2]
        i += 1
    return d


def drop_tuple_key(x, n):
    d = {1: x * 1.0, (2, 3): x * 2.0}
    i = 0
    while i < n:
        del d[2, 3]
        i += 1
    return d


def read_key_set_on_one_branch(x):
    d = {0: x}
    if x.sum() > 0:
        d[7] = x * 2.0
    return d[7] + 1.0


@pytest.mark.parametrize("fn,args,key", [
    (drop_int_key, (rt.to_tensor(np.array(2)),), 2),
    (drop_tuple_key, (rt.to_tensor(np.array(2)),), (2, 3)),  # (was no error at all)
    (read_key_set_on_one_branch, (), 7)])
def test_the_key_of_a_run_time_key_error_is_eagers(fn, args, key):
    """The KeyError a run raises carries the key itself (an int), not its text: `e.args[0]`,
    `repr(e)` and `e.args[0] == key` as eagerly."""
    x = rt.to_tensor(np.array([-1.5, -2.0], "float32"))
    static = d2s.to_static(fn)
    with pytest.raises(KeyError) as want:
        fn(x, *args)
    with pytest.raises(KeyError) as got:
        static(x, *args)
    assert want.value.args == got.value.args == (key,)
    assert repr(got.value) == repr(want.value)
