"""Python containers of values the converted code computed (`int(a[i])`, tuples of them):
`in` compares by value (a graph op), as eager code does; what cannot be the same (the count
of a set of them, a returned dict keyed by one) is a ConversionError at the user's line."""
import itertools

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def repeated_pairs(a):
    seen = set()
    repeats = 0
    for i in range(a.shape[0] - 1):
        pair = (int(a[i]), int(a[i + 1]))
        if pair in seen:
            repeats += 1
        seen.add(pair)
    return repeats


def key_lookup(a):
    index = {}
    for i in range(3):
        index[int(a[i])] = i
    return int(a[3]) in index, 7 in index, (int(a[0]), 1) in {(1, 1), (2, 1)}


def distinct_count(a):
    seen = set()
    for i in range(3):
        seen.add(int(a[i]))
    return len(seen)


def keyed_result(a):
    return {int(a[0]): a * 2}


def reference_repeats(a):
    pairs = list(itertools.pairwise(a))
    return sum(1 for i, p in enumerate(pairs) if p in pairs[:i])


INPUTS = [[1, 1, 1, 1, 1], [1, 2, 1, 2, 3], [1, 2, 3, 4, 5], [7, 7, 1, 7, 7]]


def test_membership_in_a_set_of_traced_pairs_is_by_value():
    static = d2s.to_static(repeated_pairs)
    for data in INPUTS:
        a = np.array(data, "int64")
        want = reference_repeats(list(data))
        assert repeated_pairs(rt.to_tensor(a)) == want
        assert int(static(rt.to_tensor(a))) == want
    assert static._cache.traces == 1


def test_membership_in_a_dict_keyed_by_traced_ints():
    static = d2s.to_static(key_lookup)
    for data in INPUTS:
        a = np.array(data, "int64")
        want = (data[3] in data[:3], 7 in data[:3], (data[0], 1) in {(1, 1), (2, 1)})
        eager, got = key_lookup(rt.to_tensor(a)), static(rt.to_tensor(a))
        assert len(eager) == len(got) == len(want)
        assert tuple(eager) == want
        assert tuple(bool(v) for v in got) == want


def test_a_distinct_count_of_computed_numbers_follows_the_run():
    """`len()` of a set of computed ints: the program counts the distinct values (issue 35,
    `distinct_numbers`; refused before)."""
    static = d2s.to_static(distinct_count)
    for v in ([1, 1, 2, 3], [4, 4, 4, 0], [0, 1, 2, 2]):
        a = rt.to_tensor(np.array(v, "int64"))
        assert static(a) == distinct_count(a) == len(set(v[:3]))
        assert type(static(a)) is int


@pytest.mark.parametrize("fn, what", [(keyed_result, "returns a dict keyed by")])
def test_what_a_program_cannot_count_or_return_is_refused(fn, what):
    a = rt.to_tensor(np.array([1, 1, 2, 3], "int64"))
    fn(a)  # eager runs
    with pytest.raises(ConversionError, match=what) as info:
        d2s.to_static(fn)(a)
    assert "test_traced_keys.py" in str(info.value)
    assert "Variable" not in str(info.value)
