"""Queries of a list the program grows (issue 35): `count`, `index`, `sorted` and `sort` of a
list appended to in a loop over a tensor range or under a tensor `if` (a tensor array). They
raised `AttributeError: 'Tensor' object has no attribute 'count'` and a `len()` TypeError;
they run when the program runs, with eager's values and Python types, and eager's ValueError
for `index` of a missing value. One program serves every run-time length."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line, shown


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def length_stats(tokens, n):
    lengths = []
    for i in range(n):
        lengths.append(int(tokens[i]))
    return lengths.count(0), lengths.count(2), lengths.index(2), lengths.index(0, 1)


def mixed_kinds(x, n):
    seen = [0.5]
    for i in range(n):
        if x[i] > 0:
            seen.append(int(x[i]))
        else:
            seen.append(True)
    return seen.count(1), seen.index(True), sorted(seen), sorted(seen, reverse=True)


def scores_found(scores, n, target):
    kept = []
    for i in range(n):
        kept.append(scores[i] * 2.0)
    return kept.count(target * 2.0), kept.index(target * 2.0)


def ranked(scores, n):
    kept = []
    for i in range(n):
        kept.append(scores[i] * (i + 1.0))
    best = sorted(kept, reverse=True)
    kept.sort()
    return rt.stack(best), rt.stack(kept)


def chosen_under_if(x):
    picks = [3, 1]
    if x.sum() > 0:
        picks.append(2)
    return sorted(picks), picks.count(1)


def _np_length_stats(tokens, n):
    lengths = [int(t) for t in tokens[:n]]
    return lengths.count(0), lengths.count(2), lengths.index(2), lengths.index(0, 1)


def test_count_and_index_of_python_ints_grown_in_a_graph_loop():
    tv = np.array([0, 2, 0, 2, 5, 0], "int64")
    static = d2s.to_static(length_stats, full_graph=True)
    for n in (4, 6):
        want = _np_length_stats(tv, n)
        got_eager = length_stats(rt.to_tensor(tv), n)
        got = static(rt.to_tensor(tv), rt.to_tensor(n))
        assert got_eager == want
        assert got == want and all(type(v) is int for v in got)
    assert len(static.program_cache) == 1


def test_index_of_a_missing_item_raises_eagers_value_error_when_the_program_runs():
    tv = np.array([0, 1, 0, 2], "int64")
    static = d2s.to_static(length_stats, full_graph=True)
    assert static(rt.to_tensor(tv), rt.to_tensor(4)) == (2, 1, 3, 2)
    for fn, n in ((length_stats, 2), (static, rt.to_tensor(2))):  # no 2 among [0, 1]
        with pytest.raises(ValueError, match="2 is not in list"):
            fn(rt.to_tensor(tv), n)
    with pytest.raises(ValueError, match="0 is not in list"):  # 0 only before start=1
        static(rt.to_tensor(np.array([0, 2, 1, 1], "int64")), rt.to_tensor(3))
    assert len(static.program_cache) == 1


def test_numbers_of_several_types_keep_their_types_when_sorted():
    xv = np.array([1.0, -1.0, 3.0, -2.0], "float32")
    static = d2s.to_static(mixed_kinds, full_graph=True)
    for n in (2, 4):
        want = mixed_kinds(rt.to_tensor(xv), n)
        got = static(rt.to_tensor(xv), rt.to_tensor(n))
        assert len(got) == len(want) == 4
        assert got[:2] == want[:2]
        for g, w in zip(got[2:], want[2:]):
            assert len(g) == len(w) == n + 1
            assert g == w and [type(v) for v in g] == [type(v) for v in w], (g, w)


def test_count_and_index_of_zero_d_tensors():
    sv = np.array([0.5, -1.0, 0.5, 2.0], "float32")
    static = d2s.to_static(scores_found, full_graph=True)
    for n, target, want in ((4, 0.5, (2, 0)), (4, 2.0, (1, 3)), (2, -1.0, (1, 1))):
        for fn, nn in ((scores_found, n), (static, rt.to_tensor(n))):
            assert fn(rt.to_tensor(sv), nn, rt.to_tensor(np.float32(target))) == want
    with pytest.raises(ValueError, match="is not in list"):
        static(rt.to_tensor(sv), rt.to_tensor(2), rt.to_tensor(np.float32(2.0)))


def _np_ranked(sv, n):
    kept = [sv[i] * (i + 1.0) for i in range(n)]
    return np.array(sorted(kept, reverse=True)), np.array(sorted(kept))


def test_sorted_tensors_keep_their_gradient():
    sv = np.array([1.0, -2.0, 0.25, 3.0], "float64")
    static = d2s.to_static(ranked, full_graph=True)
    for n in (1, 3, 4):
        want_best, want_kept = _np_ranked(sv, n)
        weights = np.arange(1.0, n + 1.0)
        for fn, nn in ((ranked, n), (static, rt.to_tensor(n))):
            x = rt.to_tensor(sv, stop_gradient=False)
            best, kept = fn(x, nn)
            np.testing.assert_allclose(best.numpy(), want_best)
            np.testing.assert_allclose(kept.numpy(), want_kept)
            (best * rt.to_tensor(weights)).sum().backward()
            grad = numeric_grad(lambda v, n=n, w=weights: float((_np_ranked(v, n)[0] * w).sum()),
                                sv.copy())
            np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-6, atol=1e-8)
    assert len(static.program_cache) == 1


def test_a_list_grown_under_a_tensor_if_is_sorted_and_counted():
    static = d2s.to_static(chosen_under_if, full_graph=True)
    for xv, want in (([1.0, 2.0], ([1, 2, 3], 1)), ([-1.0, 0.0], ([1, 3], 1))):
        assert chosen_under_if(rt.to_tensor(xv)) == want
        got = static(rt.to_tensor(xv))
        assert got == want and all(type(v) is int for v in got[0])


def pairs_counted(x, n):
    pairs = []
    for i in range(n):
        pairs.append((x[i], x[i] * 2.0))
    return pairs.count((x[0], x[0] * 2.0))


def rows_sorted(x, n):
    rows = []
    for i in range(n):
        rows.append(x[i])
    return sorted(rows)


def sorted_by_key(x, n):
    kept = []
    for i in range(n):
        kept.append(x[i])
    return sorted(kept, key=lambda v: -v)


@pytest.mark.parametrize("fn, text, says", [
    (pairs_counted, "return pairs.count", "count() of a list of tensors of shape [2]"),
    (rows_sorted, "return sorted(rows)", "sorted() of a list of tensors of shape [2]"),
    (sorted_by_key, "return sorted(kept", "the keys of sorted() of a list of tensors of shape"),
])
def test_items_that_cannot_be_compared_are_refused_at_the_users_line(fn, text, says):
    x = rt.to_tensor(np.array([[1.0, 2.0], [0.0, 1.0]], "float32"))
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(x, rt.to_tensor(2))
    message = assert_at_user_line(info.value, __file__, line_of(fn, text))
    assert says in shown(info.value) and says in message


def flags_and_values(x, n):
    flags = []
    values = []
    for i in range(n):
        flags.append(bool(x[i] > 0))
        values.append(float(x[i]))
    return (flags.count(True), flags.count(None), values.count(1), sorted(flags),
            sorted(values, reverse=True))


def test_bools_floats_and_empty_lists():
    x = rt.to_tensor(np.array([1.0, -1.0, 2.0, 1.0], "float32"))
    static = d2s.to_static(flags_and_values, full_graph=True)
    for n in (0, 2, 4):
        want = flags_and_values(x, n)
        got = static(x, rt.to_tensor(n))
        assert len(got) == len(want) == 5
        assert got == want
        assert [type(v) for v in got[3] + got[4]] == [type(v) for v in want[3] + want[4]]
    assert len(static.program_cache) == 1


def slices_and_ints(x, n, start):
    ones = []
    ints = []
    for i in range(n):
        ones.append(x[i:i + 1])  # (one element each: a size the run decides)
        ints.append(rt.cast(x[i], "int64"))
    return rt.stack(sorted(ones)), ints.count(0.5), ints.count(2), ints.index(2, start)


def repeats_so_far(x, n):
    seen = []
    repeats = rt.zeros([], "int64")
    for i in range(n):
        seen.append(x[i])
        repeats = repeats + seen.count(x[i]) - 1
    return repeats


def test_items_sized_at_run_time_and_a_count_inside_the_loop():
    xv = np.array([2.0, 1.0, 2.0, 0.5, 2.0], "float32")
    static = d2s.to_static(slices_and_ints, full_graph=True)
    for n, start in ((4, 1), (3, -1), (5, -2)):
        kept = xv[:n]
        want_ints = [int(v) for v in kept]
        want_index = want_ints.index(2, start)
        for fn, args in ((slices_and_ints, (n, start)),
                         (static, (rt.to_tensor(n), rt.to_tensor(start)))):
            ones, halves, twos, index = fn(rt.to_tensor(xv), *args)
            np.testing.assert_array_equal(ones.numpy(), np.sort(kept)[:, None])
            assert (halves, twos, index) == (0, want_ints.count(2), want_index)
    assert len(static.program_cache) == 1
    counted = d2s.to_static(repeats_so_far, full_graph=True)
    for n, want in ((2, 0), (3, 1), (5, 3)):
        assert int(repeats_so_far(rt.to_tensor(xv), n)) == want
        assert int(counted(rt.to_tensor(xv), rt.to_tensor(n))) == want
