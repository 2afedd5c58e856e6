"""A frozenset (or set) made outside the call -- a module constant a helper is given,
`self.special`, an item of a config dict, an argument -- on the LEFT of set algebra or a
comparison whose right operand is a set the converted code made (`len(SPECIAL & seen)`).
A frozenset's operator takes any `set` subclass as a set and never asks it, so with `seen`
holding `int(t)` values the trace's identity comparison would decide, silently. The sets
converted code makes are no `set` subclass (`operators.made_sets`): the caller's operator
gives NotImplemented and the made set's reflected one refuses at the user's line; with only
Python values each form gives eager's values and Python types, on both paths of one program.
"""
import copy
import functools

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError

SPECIAL = frozenset({1, 7})
CONFIG = {"special": frozenset({1, 7}), "vocab": 10}
OPS = ["&", "-", "^", "|", "<", "<=", ">", ">=", "==", "!="]


def combine(op, left, right):
    if op == "&":
        return left & right
    if op == "-":
        return left - right
    if op == "^":
        return left ^ right
    if op == "|":
        return left | right
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right
    if op == "==":
        return left == right
    return left != right


def _score(out):
    return len(out) if isinstance(out, (set, frozenset)) else float(out)


def _seen(a, tags, computed):
    seen = set(tags)
    if computed:
        seen.add(int(a[0] > 0))  # (0 or 1: a value the run decides)
    return seen


def _branch(a, n):
    if a.sum() > 0:  # (the inputs take both paths of one program)
        return a * 2 + n
    return a - n


def by_argument(a, special, op, tags, computed=True):
    out = combine(op, special, _seen(a, tags, computed))
    return _branch(a, _score(out)), out


def by_module_constant(a, op, tags, computed=True):
    out = combine(op, SPECIAL, _seen(a, tags, computed))  # (a helper's parameter)
    return _branch(a, _score(out)), out


def by_dict_item(a, op, tags, computed=True):
    out = combine(op, CONFIG["special"], _seen(a, tags, computed))
    return _branch(a, _score(out)), out


class Tagger(rt.nn.Layer):
    def __init__(self, special):
        super().__init__()
        self.special = special

    def forward(self, a, op, tags, computed=True):
        seen = _seen(a, tags, computed)
        out = combine(op, self.special, seen)
        return _branch(a, _score(out)), out


HOLDERS = {
    "argument": lambda: (by_argument, (frozenset({1, 7}),)),
    "argument_set": lambda: (by_argument, ({1, 7},)),
    "module": lambda: (by_module_constant, ()),
    "dict_item": lambda: (by_dict_item, ()),
    "self_frozenset": lambda: (Tagger(frozenset({1, 7})), ()),
    "self_set": lambda: (Tagger({1, 7}), ()),
}
LINES = {"&": "return left & right", "-": "return left - right", "^": "return left ^ right",
         "|": "return len(out)", "<": "return left < right", "<=": "return left <= right",
         ">": "return left > right", ">=": "return left >= right",
         "==": "return left == right", "!=": "return left != right"}


def _x(v):
    return rt.to_tensor(np.array([v, 2.0], "float32"))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("holder", HOLDERS)
def test_computed_items_are_refused_at_the_users_line(holder, op):
    fn, args = HOLDERS[holder]()
    eager = [fn(_x(v), *args, op, (7,)) for v in (1.0, -1.0)]
    assert eager[0][1] != eager[1][1] or op in ("<", ">")  # (the paths give other answers)
    with pytest.raises(ConversionError) as e:
        d2s.to_static(fn)(_x(1.0), *args, op, (7,))
    msg = str(e.value)
    if op == "|":  # (`len(out)` counts the run's distinct numbers, `distinct_numbers`: the
        # set itself, returned, is what no program gives)
        assert "returns a" in msg and "holding a tensor it computed" in msg, msg
    else:
        assert __file__ in msg and LINES[op] in msg, msg
        assert "holding a value computed by the converted code" in msg
    for internal in ("_retval", "Variable(%", "<undefined", "MadeSet", "MadeFrozenSet"):
        assert internal not in msg


def _observed(out):
    t, s = out
    return t.numpy().tolist(), t.dtype, type(s), s


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("holder", HOLDERS)
def test_python_items_keep_eagers_values_and_types(holder, op):
    fn, args = HOLDERS[holder]()
    static = d2s.to_static(fn)
    for tags in ((1, 7), (0, 1, 7, 9)):
        for v in (1.0, -1.0, 3.0):
            eager = fn(_x(v), *args, op, tags, False)
            got = static(_x(v), *args, op, tags, False)
            assert _observed(got) == _observed(eager)
            ref = combine(op, frozenset({1, 7}), set(tags))  # (NumPy reference)
            n = len(ref) if isinstance(ref, (set, frozenset)) else float(ref)
            want = np.array([v, 2.0], "float32") * 2 + n if v + 2 > 0 else None
            np.testing.assert_array_equal(got[0].numpy(), want)
            assert got[1] == ref


def grow_callers_set(a, tags, computed):
    seen = _seen(a, (2,), computed)
    tags |= seen  # (the caller's set itself, as eager's in-place `|=`)
    return a + len(seen)


def narrow_callers_set(a, box, computed):
    seen = _seen(a, (2,), computed)
    box.tags &= seen
    return a * 2


class Box:
    pass


def test_in_place_operators_change_the_callers_set():
    static = d2s.to_static(grow_callers_set)
    for fn in (grow_callers_set, static):
        tags = {5}
        alias = tags
        fn(_x(1.0), tags, False)
        assert alias is tags and type(tags) is set and tags == {2, 5}
    box_e, box_s = Box(), Box()
    box_e.tags, box_s.tags = {2, 5}, {2, 5}
    kept_e, kept_s = box_e.tags, box_s.tags
    narrow_callers_set(_x(1.0), box_e, False)
    d2s.to_static(narrow_callers_set)(_x(1.0), box_s, False)
    assert box_s.tags is kept_s and box_e.tags is kept_e and kept_s == kept_e == {2}
    with pytest.raises(ConversionError, match=r"box\.tags &= seen"):
        d2s.to_static(narrow_callers_set)(_x(1.0), box_s, True)


def unbound_calls(a, special, computed):
    seen = _seen(a, (1, 7), computed)
    common = frozenset.__and__(special, seen)
    union = frozenset.union(special, seen)
    left = set.difference(seen, special)
    both = functools.reduce(set.intersection, [seen, {7, 9}, set(special)])
    return (a + len(common), common, union, left, set.__or__(seen, {3}), both,
            functools.reduce(set.union, [seen, {9}]), [*map(set.__len__, [seen, {2}])])


@pytest.mark.parametrize("computed", [False, True])
def test_unbound_set_methods_of_a_made_set(computed):
    static = d2s.to_static(unbound_calls)
    if computed:
        with pytest.raises(ConversionError, match=r"frozenset\.__and__\(special, seen\)"):
            static(_x(1.0), SPECIAL, True)
        return
    for v in (1.0, -1.0):
        eager, got = unbound_calls(_x(v), SPECIAL, False), static(_x(v), SPECIAL, False)
        np.testing.assert_array_equal(got[0].numpy(), eager[0].numpy())
        assert [(type(s), s) for s in got[1:]] == [(type(s), s) for s in eager[1:]]


@d2s.not_to_static
def _unconverted_view(s):
    return isinstance(s, set), isinstance(s, frozenset), s.__class__ is set


def looks_like_a_set(a, tags):
    seen = set(tags)
    frozen = frozenset(seen)
    same = copy.copy(seen), copy.deepcopy(seen), seen.copy()
    table = {frozen: 1, frozenset({99}): 2}
    return (a * len(seen), isinstance(seen, set), type(seen) is set, seen.__class__ is set,
            isinstance(frozen, frozenset), seen == set(tags), set(tags) == frozen,
            table[frozenset(tags)], repr(seen), str(frozen), sorted(seen), [*same],
            _unconverted_view(seen), _unconverted_view(frozen), f"{frozen}",
            hash(frozen) == hash(frozenset(tags)), 3 in seen, len(frozen), table)


@pytest.mark.parametrize("tags", [(3,), (1, 3, 5)])
def test_made_sets_look_like_sets(tags):
    eager = looks_like_a_set(_x(1.0), tags)
    static = d2s.to_static(looks_like_a_set)
    for got in (static(_x(1.0), tags), static(_x(1.0), tags)):  # (traced, then the program)
        np.testing.assert_array_equal(got[0].numpy(), eager[0].numpy())
        assert [(type(v), v) for v in got[1:]] == [(type(v), v) for v in eager[1:]]
        assert [type(s) for s in got[11]] == [set, set, set]
        assert [type(k) for k in got[-1]] == [frozenset, frozenset]  # (dict keys: plain too)


KNOWN_PAIRS = {frozenset({1, 2}), frozenset({3})}


def _pair_known(x, extra):
    seen = set()
    seen.add(1)
    seen.add(extra)
    return x * 2.0, seen in KNOWN_PAIRS, set() in KNOWN_PAIRS, seen in [{1, 2}]


def test_a_made_set_looked_up_in_a_set_of_frozensets_as_eager():
    """`{1, 2} in {frozenset({1, 2})}`: a set's `in` looks a set up as a frozenset."""
    static = d2s.to_static(_pair_known)
    for extra in (2, 3):
        x = rt.to_tensor(np.array([1.0, -1.0], "float32"))
        got, want = static(x, extra), _pair_known(x, extra)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
        assert got[1:] == want[1:] == (extra == 2, False, extra == 2)
        assert all(type(v) is bool for v in got[1:])
