"""A dict key that one branch of a tensor `if` sets to a Python number (`d["n"] = 3`,
`stats["ratio"] = 0.5`, `m["best"] = True`) converts as a key holding a tensor does: the key
gets a presence flag, its value stands for the Python number (eager's type and exact value
come back: `int`, `float`, `bool`), `in` / `.get` / `len` follow the run, reading it where the
other branch ran raises eager's `KeyError`, and a dict the caller reaches has the key after
the calls that set it. (Was a StateChangeError "is set in the if branch only".)"""
import numpy as np
import pytest

import d2s
import runtime as rt


def _x(v):
    return rt.to_tensor(np.array(v, "float32"))


def scaled(x):
    d = {"a": x}
    if x.sum() > 0:
        d["n"] = 3
        d["lr"] = 0.5
    else:
        d["clip"] = True
    out = x * 2.0
    if "n" in d:
        out = out + d["n"] * d["lr"]
    return out, d.get("n", -1), len(d), "clip" in d, d


def read_where_unset(x):
    d = {}
    if x.sum() > 0:
        d["n"] = 2.5
    return d["n"] * 2


class Tracker(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.stats = {"calls": 0}

    def forward(self, x):
        if x.sum() > 0:
            self.stats["pos"] = 1
            self.stats["ratio"] = 0.5
        return x * 2.0


def _reference(v):
    x = np.array(v, "float32")
    pos = x.sum() > 0
    out = x * 2.0 + (1.5 if pos else 0.0)
    return out, (3 if pos else -1), (3 if pos else 2), not pos


@pytest.mark.parametrize("v", [[1.0, 2.0], [-1.0, -2.0], [0.5, -0.25]])
def test_python_numbers_under_a_key_one_branch_sets(v):
    static = d2s.to_static(scaled)
    e, s = scaled(_x(v)), static(_x(v))
    want = _reference(v)
    np.testing.assert_allclose(s[0].numpy(), want[0])
    np.testing.assert_allclose(e[0].numpy(), want[0])
    assert s[1:4] == e[1:4] == want[1:]
    assert type(s[1]) is int and type(s[3]) is bool
    assert list(s[4]) == list(e[4])
    assert {k: type(v) for k, v in s[4].items()} == {k: type(v) for k, v in e[4].items()}
    assert {k: v for k, v in s[4].items() if k != "a"} == {
        k: v for k, v in e[4].items() if k != "a"}


def test_one_program_serves_both_paths():
    static = d2s.to_static(scaled)
    for v in ([1.0, 2.0], [-1.0, -2.0], [2.0, 2.0]):
        static(_x(v))
    assert len(static.program_cache) == 1


def test_reading_the_key_where_the_other_branch_ran_is_eagers_key_error():
    static = d2s.to_static(read_where_unset)
    assert static(_x([1.0, 2.0])) == read_where_unset(_x([1.0, 2.0])) == 5.0
    assert type(static(_x([1.0, 2.0]))) is float
    for f in (read_where_unset, static):
        with pytest.raises(KeyError, match="'n'"):
            f(_x([-1.0, -2.0]))


def test_a_layer_dict_has_the_key_after_the_calls_that_set_it():
    eager, static = Tracker(), d2s.to_static(Tracker())
    for v in ([-1.0, -2.0], [1.0, 2.0], [-3.0, 1.0]):
        np.testing.assert_allclose(static(_x(v)).numpy(), eager(_x(v)).numpy())
        assert static.stats == eager.stats
        assert [type(v) for v in static.stats.values()] == [
            type(v) for v in eager.stats.values()]
    assert eager.stats == {"calls": 0, "pos": 1, "ratio": 0.5}


def counted_then_returned(x, n):
    d = {}
    if x.sum() > 0:
        d["k"] = 1
    i = 0
    while i < n:
        d["m"] = i
        i += 1
    return d


def test_a_dict_a_graph_loop_adds_to_after_an_if_is_returned_as_eager_returns_it():
    """Refused until a key a top-level graph loop adds got the moment the loop began as its
    rank (`key_ranks.after_loop`): 'k' where the `if` ran, then 'm' where the loop ran;
    Python ints under both, as eager's."""
    static = d2s.to_static(counted_then_returned)
    for xv, n in (([1.0, 2.0], 2), ([-1.0, -2.0], 2), ([1.0, 2.0], 0), ([-1.0, 2.0], 1)):
        args = (_x(xv), rt.to_tensor(np.array(n, "int64")))
        want, got = counted_then_returned(*args), static(*args)
        assert list(got.items()) == list(want.items())
        assert [type(v) for v in got.values()] == [int] * len(want)
    assert len(static.program_cache) == 1


def counted_on_some_trips(x, n):
    d = {}
    if x.sum() > 0:
        d["k"] = 1
    i = 0
    while i < n:
        if x[i] > 0:
            d["pos"] = i
        d["m"] = i
        i += 1
    return d


def test_returning_a_dict_whose_key_order_the_run_decides_names_the_function():
    """Eager's key order differs by path ('pos' before 'm' where the first trip set it,
    after it where a later one did): refused, and the message names the user's function and
    file (it said "(unknown line)")."""
    static = d2s.to_static(counted_on_some_trips)
    with pytest.raises(d2s.ConversionError) as info:
        static(_x([1.0, 2.0]), rt.to_tensor(np.array(2, "int64")))
    msg = str(info.value)
    assert "returning the dict (counted_on_some_trips, File" in msg
    assert "test_python_numbers_under_branch_keys.py" in msg and "unknown line" not in msg
