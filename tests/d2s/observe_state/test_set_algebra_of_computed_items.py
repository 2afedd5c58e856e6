"""Set algebra, comparisons and item-per-item reads of a Python set (or dict) holding values
the converted code computed (`seen.add((int(a[0] > 0), 1))`): while tracing those compare by
identity, so Python's result (`len(seen & known)`, `seen <= known`, `sorted(seen)`) would be
the trace's, silently; so would a dict holding such a key beside a Python key it may
equal (`{0: a, int(t): b}`) but for a key of two values (`int(t > 0)`: each a key with a
presence flag). Each is a ConversionError at the user's line naming what to write
instead; `in` (by value), and what is built from it, agrees with eager on every path of one
program; sets of Python values keep Python's algebra."""
import traceback

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError

KNOWN = {(0, 1), (1, 1)}


def _note(seen, a, i):
    seen.add((int(a[i] > 0), 1))


def _seen(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return seen


def intersection(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + len(seen & KNOWN)


def difference_from_known(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + len(KNOWN - seen)


def symmetric(a):
    seen = set()
    _note(seen, a, 0)
    return a + len(seen ^ KNOWN)


def subset(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + float(seen <= KNOWN)


def proper_superset(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + float(seen > KNOWN)


def equal(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + float(seen == KNOWN)


def method_intersection(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    common = seen.intersection
    return a + len(common(KNOWN))


def known_isdisjoint(a):
    seen = _seen(a)
    return a + float(KNOWN.isdisjoint(seen))


def discard_known(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    seen.discard((1, 1))
    return a + float((1, 1) in seen)


def in_place_difference(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    seen -= KNOWN
    return a + float((1, 1) in seen)


def sorted_items(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + sorted(seen)[0][0]  # noqa: FURB192  (the read under test)


def comprehension(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + sum([p[1] for p in seen])


def printed(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    print("seen:", seen)
    return a


def formatted(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a, f"{seen}"


def popped(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return a + seen.pop()[0]


def unpacked(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    pairs = [*seen]
    return a + len(pairs)


def mapped(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    firsts = list(map(lambda p: p[0], seen))  # noqa: C417  (the read under test)
    return a + len(firsts)


def unpacked_pair(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    first, second = seen
    return a + first[1] + second[1]


def dict_compared(a):
    table = {}
    table[int(a[0] > 0)] = 1.0
    return a + float(table == {1: 1.0})


def display_with_a_python_key(a):
    table = {0: 2.0, int(a[0] > 0): 1.0}
    return a + table[0]


def python_key_beside_a_computed_one(a):
    k = int(a[0] > 0)
    scores = {k: 1.0}
    scores[1] = 2.0
    return a + scores[k]


def dict_set_under_a_tensor_if(a):
    table = {}
    if a.sum() > 0:
        table[int(a[0] > 0)] = 1.0
    return a + float(1 in table)


class Tracker:
    """A model's helper object: the known pairs on `self`, the seen ones made per call."""

    def __init__(self):
        self.known = {(0, 1), (1, 1)}

    def forward(self, a):
        seen = set()
        _note(seen, a, 0)
        return a + len(seen & self.known)


REFUSED = [
    (intersection, "len(seen & KNOWN)", "sum(p in s for p in t)"),
    (difference_from_known, "len(KNOWN - seen)", "`s - t`"),
    (symmetric, "len(seen ^ KNOWN)", "`s - t`"),
    (subset, "seen <= KNOWN", "all(p in t for p in u)"),
    (proper_superset, "seen > KNOWN", "all(p in t for p in u)"),
    (equal, "seen == KNOWN", "all(p in t for p in u)"),
    (method_intersection, "len(common(KNOWN))", "sum(p in s for p in t)"),
    (known_isdisjoint, "KNOWN.isdisjoint(seen)", "not any(p in s for p in t)"),
    (discard_known, "seen.discard((1, 1))", "bool mask"),
    (in_place_difference, "seen -= KNOWN", "`s - t`"),
    (sorted_items, "sorted(seen)", "rt.unique"),
    (comprehension, "[p[1] for p in seen]", "rt.unique"),
    (printed, 'print("seen:", seen)', "Print the tensors"),
    (formatted, 'f"{seen}"', "Print the tensors"),
    (popped, "seen.pop()", "bool mask"),
    (unpacked, "pairs = [*seen]", "rt.unique"),
    (mapped, "list(map(lambda p: p[0], seen))", "rt.unique"),
    (unpacked_pair, "first, second = seen", "rt.unique"),
    (dict_compared, "table == {1: 1.0}", "Compare the items by name"),
    (python_key_beside_a_computed_one, "return a + scores[k]", "rt.to_tensor(TABLE)[i]"),
    (Tracker().forward, "len(seen & self.known)", "sum(p in s for p in t)"),
]


@pytest.mark.parametrize("fn, line, advice", REFUSED,
                         ids=[f.__name__ for f, _, _ in REFUSED])
def test_reads_that_compare_computed_items_are_refused_at_the_users_line(fn, line, advice):
    a = rt.to_tensor(np.array([1.0, -2.0], "float32"))
    fn(a)  # eager runs
    with pytest.raises(ConversionError) as info:
        d2s.to_static(fn)(a)
    msg = "".join(traceback.format_exception_only(info.value))  # (the user's line: a note)
    assert "test_set_algebra_of_computed_items.py" in msg and line in msg
    assert advice in msg
    for internal in ("Variable", "_retval", "%t", "<undefined"):
        assert internal not in msg


@pytest.mark.parametrize("fn", [display_with_a_python_key, dict_set_under_a_tensor_if])
def test_keys_of_two_values_beside_python_keys_follow_the_run(fn):
    # (refused at the store before: `int(a[0] > 0)` is 0 or 1, each a key with a presence
    # flag, `computed_keys._put_each`)
    static = d2s.to_static(fn)
    for av in ([1.0, -2.0], [-1.0, 2.0], [-1.0, -2.0]):
        a = rt.to_tensor(np.array(av, "float32"))
        np.testing.assert_array_equal(static(a).numpy(), fn(a).numpy())
    assert static._cache.traces == 1


def counted(a, known):
    seen = {(0, 1)}
    _note(seen, a, 0)
    _note(seen, a, 1)
    common = sum(p in seen for p in known)
    inside = all(p in known for p in [(0, 1), (1, 1)])
    grown = seen | {(2, 2)}
    return a * common, common, (1, 1) in grown, (2, 2) in grown, inside


def counted_reference(av, known):
    seen = {(0, 1), (int(av[0] > 0), 1), (int(av[1] > 0), 1)}
    common = len(seen & known)
    x = np.array(av, "float32")
    return x * common, common, (1, 1) in seen, True, {(0, 1), (1, 1)} <= known


@pytest.mark.parametrize("known", [KNOWN, {(1, 1), (3, 1)}])
def test_membership_built_counts_agree_with_eager_on_every_path(known):
    static = d2s.to_static(counted)
    for av in ([1.0, 2.0], [-1.0, 2.0], [-1.0, -2.0], [3.0, -2.0]):
        a = rt.to_tensor(np.array(av, "float32"))
        want, eager, got = counted_reference(av, known), counted(a, known), static(a, known)
        assert len(want) == len(eager) == len(got)
        for w, e, g in zip(want, eager, got):
            if isinstance(w, np.ndarray):
                np.testing.assert_allclose(e.numpy(), w)
                np.testing.assert_allclose(g.numpy(), w)
            else:
                assert type(e) is type(g) is type(w) and e == g == w
    assert static._cache.traces == 1


def python_sets(a):
    tags = {0, 1}
    tags.add(2)
    shared = tags & {1, 2, 5}
    tags -= {0}
    return a + len(shared), len(tags ^ {2, 7}), tags <= {1, 2, 3}, sorted(tags)


def test_sets_of_python_values_keep_pythons_algebra():
    a = rt.to_tensor(np.array([1.0, -2.0], "float32"))
    eager, got = python_sets(a), d2s.to_static(python_sets)(a)
    np.testing.assert_allclose(got[0].numpy(), eager[0].numpy())
    np.testing.assert_allclose(got[0].numpy(), np.array([3.0, 0.0], "float32"))
    assert got[1:] == eager[1:] == (2, True, [1, 2])


def tensor_arithmetic(a, b):
    groups = set()
    masked = (a > 0) & (b > 0)
    groups.add(1)
    return a - b, masked ^ (a > b), len(groups)


def test_tensor_operators_next_to_a_set_stay_tensor_ops():
    static = d2s.to_static(tensor_arithmetic)
    assert "set_op" not in static.code
    a = rt.to_tensor(np.array([1.0, -2.0, 3.0], "float32"))
    b = rt.to_tensor(np.array([2.0, -1.0, -3.0], "float32"))
    for e, g in zip(tensor_arithmetic(a, b)[:2], static(a, b)[:2]):
        np.testing.assert_array_equal(g.numpy(), e.numpy())


def common_count(a):
    seen = {(0, 1)}
    _note(seen, a, 0)
    return sum(p in seen for p in ((0, 1), (1, 1), (1, 2)))


def test_a_count_of_in_tests_is_a_python_int_as_in_eager():
    static = d2s.to_static(common_count)
    for av, want in (([1.0, 2.0], 2), ([-1.0, 2.0], 1)):
        a = rt.to_tensor(np.array(av, "float32"))
        eager, got = common_count(a), static(a)
        assert type(eager) is type(got) is int and eager == got == want
