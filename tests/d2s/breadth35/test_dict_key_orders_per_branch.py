"""Dict keys that the branches of a tensor `if` set in another order each (issue 35): a loss
dict filled `aux` then `main` on one path and `main` then `aux` on the other, keys set on one
path only beside keys set in another order. Key order is observable (a returned dict, a loop
over it, its text): a returned dict has the order of the branch the run takes (the `if`'s
condition is its order flag), and a read of the order that one program cannot follow (a loop,
`list(d)`, `print(d)`, a comprehension; a dict the caller reaches) raises a ConversionError
at the user's line. One program serves inputs taking either path."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError
from tests.d2s.observe_wild.helpers import assert_same_leaves, same_with_reference

from .messages import assert_at_user_line, shown
from .test_dict_keys_in_graph_loops import line_of

POS = np.array([0.5, 1.5, -0.25], "float32")
NEG = np.array([-0.5, -1.5, 0.25], "float32")


def _scaled(x, k):
    return x * k


def losses(x):
    """A Paddle-style loss dict: the order follows which head ran first."""
    out = {"base": x.mean()}
    if x.sum() > 0:
        out["main"] = _scaled(x, 2.0).sum()
        out["aux"] = (x * x).sum()
    else:
        out["aux"] = (x - 1.0).sum()
        out["main"] = _scaled(x, 3.0).sum()
    out["total"] = out["main"] + 0.5 * out["aux"]
    return out


def losses_ref(x):
    if x.sum() > 0:
        items = [("main", 2.0 * x.sum()), ("aux", (x * x).sum())]
    else:
        items = [("aux", (x - 1.0).sum()), ("main", 3.0 * x.sum())]
    d = {"base": x.mean(), **dict(items)}
    d["total"] = d["main"] + 0.5 * d["aux"]
    return d


def some_keys_on_one_path(x):
    """The fuzzer's shape: keys the if branch sets in one order, the else branch a subset
    in another order (the others exist on the if path only)."""
    d = {}
    h = x * 1.0
    if x[1] > x[2]:
        d["a"] = h * 2.0
        d["c"] = h * 0.5
        d["n"] = 1
        d["b"] = h + 1.0
    else:
        d["b"] = h - 1.0
        d["n"] = 2
    return d, len(d), "a" in d, d.get("a", x * 0.0 - 5.0), d["n"]


def some_keys_ref(x):
    h = x * 1.0
    if x[1] > x[2]:
        d = {"a": h * 2.0, "c": h * 0.5, "n": 1, "b": h + 1.0}
    else:
        d = {"b": h - 1.0, "n": 2}
    return d, len(d), "a" in d, d.get("a", x * 0.0 - 5.0), d["n"]


class Meter:
    def __init__(self):
        self.scale = 0.5

    def stats(self, x):
        """A method: the dict a local, the branches on `self` state and a tensor."""
        s = {}
        if (x * self.scale).max() > 0.5:
            s["hi"] = x.max()
            s["lo"] = x.min()
        else:
            s["lo"] = x.min() * self.scale
            s["hi"] = x.max() * self.scale
        return s["hi"] - s["lo"], s


@pytest.mark.parametrize("fn,ref", [(losses, losses_ref), (some_keys_on_one_path,
                                                            some_keys_ref)])
def test_returned_dict_has_the_order_of_the_branch_taken(fn, ref):
    """Eager vs static vs NumPy over inputs that take each branch of one program (was
    `StateChangeError: the dict 'd' gets its keys in the order ...`)."""
    static = d2s.to_static(fn)
    for x in (POS, NEG, POS, np.array([1.0, -2.0, 3.0], "float32")):
        want = fn(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        assert_same_leaves(got, want)
        expected = ref(x)
        wanted = expected if isinstance(expected, dict) else expected[0]
        returned = got if isinstance(got, dict) else got[0]
        assert list(returned) == list(wanted)
        for k in wanted:
            np.testing.assert_allclose(np.asarray(returned[k].numpy() if isinstance(
                returned[k], rt.Tensor) else returned[k]), wanted[k], rtol=1e-5)
    assert len(static.program_cache) == 1


def test_a_method_returning_its_dict_follows_the_run():
    m = Meter()
    static = d2s.to_static(m.stats)
    for x in (POS, NEG * 0.1, POS):
        want = m.stats(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        assert_same_leaves(got, want)
        same_with_reference(got[0], want[0])


def keys_added_after(x):
    d = {}
    if x.mean() > 0:
        d["p"] = x + 1.0
        d["q"] = x * 2.0
    else:
        d["q"] = x * 3.0
        d["p"] = x - 1.0
    d["r"] = d["p"] + d["q"]
    return d


def test_keys_added_after_the_if_come_last_on_both_paths():
    static = d2s.to_static(keys_added_after)
    for x in (POS, NEG, POS):
        want = keys_added_after(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        assert list(got) == list(want) == (["p", "q", "r"] if x.mean() > 0 else
                                           ["q", "p", "r"])
        assert_same_leaves(got, want)


def loop_over(x):
    d = {"n": x.sum()}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    acc = []
    for k in d:
        acc.append(k)
    return x


def listed(x):
    d = {"n": x.sum()}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    return list(d)


def printed(x):
    d = {"n": x.sum()}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    print(d)
    return x


def comprehension(x):
    d = {"n": x.sum()}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    return [v.sum() for v in d.values()]


def reordered_twice(x):
    d = {}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    if x.mean() > 0.1:
        d["c"] = x
        d["e"] = x
    else:
        d["e"] = x
        d["c"] = x
    return d


@pytest.mark.parametrize("fn", [loop_over, listed, reordered_twice, comprehension])
def test_a_loop_a_list_and_a_dict_returned_after_two_ifs_follow_the_run(fn):
    """Refused until issue 35: each key's rank, the moment eager code first stored it
    (`key_ranks`), orders the loop, the list, a comprehension over the values (as the `for`
    statement, `comp_arrays`) and the returned dict as the run does."""
    static = d2s.to_static(fn)
    for v in (POS, NEG, np.array([0.5, -0.25, -0.2], "float32")):
        eager, got = fn(rt.to_tensor(v)), static(rt.to_tensor(v))
        if isinstance(eager, dict):
            assert list(got) == list(eager)
            assert_same_leaves(list(got.values()), list(eager.values()))
        elif isinstance(eager, list) and all(type(k) is str for k in eager):
            assert got == eager
        elif isinstance(eager, list):
            assert type(got) is list and len(got) == len(eager)
            assert_same_leaves(got, eager)
        else:
            np.testing.assert_allclose(got.numpy(), eager.numpy())
    assert len(static.program_cache) == 1


@pytest.mark.parametrize("fn,line", [(printed, "print(d)")])
def test_reading_an_order_the_run_decides_is_refused_at_the_line(fn, line, capsys):
    fn(rt.to_tensor(NEG))  # eager runs it
    with pytest.raises(ConversionError) as info:
        d2s.to_static(fn)(rt.to_tensor(NEG))
    text = shown(info.value)
    if line is not None:
        assert_at_user_line(info.value, __file__, line_of(fn, line))
    assert "set in another order each" in text and "if x.sum() > 0:" in text, text


class Holder:
    def __init__(self):
        self.stats = {}


def fill_caller_dict(x, holder):
    if x.sum() > 0:
        holder.stats["a"] = x
        holder.stats["b"] = x * 2.0
    else:
        holder.stats["b"] = x
        holder.stats["a"] = x * 2.0
    return x * 1.0


def test_a_dict_the_caller_reaches_has_the_order_of_the_branch_taken():
    """Refused until the keys' ranks were program outputs the call sorts the caller's dict
    by (`writeback_order`): before, it would have kept one order on every run."""
    static = d2s.to_static(fill_caller_dict)
    for v, keys in ((NEG, ["b", "a"]), (POS, ["a", "b"]), (NEG, ["b", "a"])):
        eager, converted = Holder(), Holder()
        fill_caller_dict(rt.to_tensor(v), eager)
        static(rt.to_tensor(v), converted)
        assert list(converted.stats) == list(eager.stats) == keys
        assert_same_leaves(converted.stats, eager.stats)
    assert len(static.program_cache) == 1


def print_one_path_key(x):
    d = {"base": x}
    if x.sum() > 0:
        d["a"] = x * 2.0
    print(d)
    return x


def test_print_of_a_dict_with_a_key_on_one_path_is_refused(capsys):
    """It printed the absent key's zeros (`'a': [0., 0., 0.]`) on the runs eager has no 'a'."""
    print_one_path_key(rt.to_tensor(NEG))
    assert "'a'" not in capsys.readouterr().out
    with pytest.raises(ConversionError) as info:
        d2s.to_static(print_one_path_key)(rt.to_tensor(NEG))
    text = assert_at_user_line(info.value, __file__, line_of(print_one_path_key, "print(d)"))
    assert "exists only where a tensor `if`" in text
