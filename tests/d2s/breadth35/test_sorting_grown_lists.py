"""`sorted` / `sort` with `key=`, and `sorted` / `sort` / `count` / `index` of a list of
tuples, where a loop over a tensor range grows the list (issue 35; a ConversionError before).
The order is decided when the program runs, as eager code's stable sort decides it (tuples
part by part, `reverse=True` keeping ties in order); one program serves every length, zero
items included; a sort inside the loop that grows the list too."""
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


def hypotheses(scores, n):
    """(score, token) pairs of a beam step, ranked three ways, counted and searched."""
    hyps = []
    for i in range(n):
        hyps.append((scores[i], rt.cast(rt.floor(scores[i] * 2.0), "int64")))
    by_score = sorted(hyps, key=lambda h: h[0], reverse=True)
    as_tuples = sorted(hyps)
    hyps.sort(key=lambda h: (h[1], -h[0]))
    return (by_score, as_tuples, hyps, hyps.count((scores[0], rt.to_tensor(1, "int64"))),
            len(hyps))


def ref_hypotheses(scores, n):
    hyps = [(float(s), int(np.floor(np.float32(s) * 2.0))) for s in scores[:n]]
    by_score = sorted(hyps, key=lambda h: h[0], reverse=True)
    return (by_score, sorted(hyps), sorted(hyps, key=lambda h: (h[1], -h[0])),
            hyps.count((float(scores[0]), 1)), n)


SCORES = np.array([0.75, 0.25, 1.5, 0.75, 0.5, 1.25], "float32")


def as_python(pairs):
    return [(float(a), int(b)) for a, b in pairs]


def test_tuples_sorted_by_key_by_parts_and_in_place_in_one_program():
    static = d2s.to_static(hypotheses, full_graph=True)
    for n in (6, 0, 3, 1, 4):
        want = ref_hypotheses(SCORES, n)
        for got in (hypotheses(rt.to_tensor(SCORES), n),
                    static(rt.to_tensor(SCORES), rt.to_tensor(n))):
            assert len(got) == len(want)
            for g, w in zip(got[:3], want[:3]):
                assert as_python(g) == w
            assert int(got[3]) == want[3] and int(got[4]) == want[4]
    assert len(static.program_cache) == 1


def ranked_rows(x, n):
    """One-element rows kept in a list sorted by a key at every step of the loop."""
    best = []
    for i in range(n):
        best.append((x[i:i + 1], x[i] * 0.0 + i))
        best.sort(key=lambda p: p[0] * p[0], reverse=True)
    return rt.concat([p[0] for p in best]) * rt.arange(1, len(best) + 1, 1, "float32")


def ref_ranked_rows(x, n):
    rows = sorted(x[:n], key=lambda v: v * v, reverse=True)
    return np.array(rows) * np.arange(1, n + 1)


X = np.array([0.5, -2.0, 1.5, 0.25, -1.0], "float32")


def test_a_sort_inside_the_loop_that_grows_the_list():
    static = d2s.to_static(ranked_rows, full_graph=True)
    for n in (5, 2, 3):
        want = ref_ranked_rows(X.astype(np.float64), n)
        np.testing.assert_allclose(ranked_rows(rt.to_tensor(X), n).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(X), rt.to_tensor(n)).numpy(), want,
                                   rtol=1e-6)
    assert len(static.program_cache) == 1


def test_the_gradient_follows_the_sorted_order():
    static = d2s.to_static(ranked_rows, full_graph=True)
    for n in (5, 3):
        x = rt.to_tensor(X)
        x.stop_gradient = False
        static(x, rt.to_tensor(n)).sum().backward()
        want = numeric_grad(lambda a, n=n: float(ref_ranked_rows(a, n).sum()),
                            X.astype(np.float64))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-5)


def top_by_key(x, n):
    kept = []
    for i in range(n):
        if x[i] > 0:
            kept.append(x[i])
    return sorted(kept, key=lambda v: -v), kept.index(x[0]) if len(kept) else -1


def test_a_list_of_numbers_sorted_by_key_and_searched():
    static = d2s.to_static(top_by_key, full_graph=True)
    for n in (5, 1):
        want = sorted([v for v in X[:n].tolist() if v > 0], reverse=True)
        got = static(rt.to_tensor(X), rt.to_tensor(n))
        assert [float(v) for v in got[0]] == want
        assert int(got[1]) == 0


def missing_pair(x, n):
    pairs = []
    for i in range(n):
        pairs.append((x[i], x[i] + 1.0))
    return pairs.index((x[0], x[0]))


def test_index_of_a_missing_tuple_raises_eagers_value_error_at_the_users_line():
    static = d2s.to_static(missing_pair, full_graph=True)
    with pytest.raises(ValueError):
        missing_pair(rt.to_tensor(X), 3)
    with pytest.raises(ValueError) as info:
        static(rt.to_tensor(X), rt.to_tensor(3))
    assert "ValueError: the tuple is not in list" in shown(info.value)
    assert_at_user_line(info.value, __file__, line_of(missing_pair, "pairs.index"))


def dicts_sorted(x, n):
    items = []
    for i in range(n):
        items.append({"score": x[i]})
    return sorted(items)


def test_dicts_without_a_key_are_refused_at_the_users_line():
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(dicts_sorted, full_graph=True)(rt.to_tensor(X), rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(dicts_sorted, "sorted(items)"))
    assert "Sort by a key" in text


def rounded_pairs(x, n):
    """Pairs sorted part by part (no key) after each append of the loop that grows them."""
    pairs = []
    for i in range(n):
        pairs.append((rt.floor(x[i]), x[i] * i))
        pairs.sort()
    return pairs


def branch_pairs(x):
    """Pairs appended by one branch of a tensor `if`, then sorted in place, descending."""
    pairs = [(x[0], x[1])]
    if x.sum() > 0:
        pairs.append((x[2], x[3]))
        pairs.append((x[3], x[2]))
    pairs.sort(reverse=True)
    return pairs


@pytest.mark.parametrize("n", [0, 2, 5])
def test_pairs_sorted_without_a_key_inside_the_growing_loop(n):
    static = d2s.to_static(rounded_pairs, full_graph=True)
    want = sorted((float(np.floor(v)), float(v) * i) for i, v in enumerate(X[:n]))
    for got in (rounded_pairs(rt.to_tensor(X), n), static(rt.to_tensor(X), rt.to_tensor(n))):
        assert [(float(a), float(b)) for a, b in got] == want


@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_pairs_grown_by_a_tensor_if_sorted_in_place(scale):
    xv = X[:4] * scale
    static = d2s.to_static(branch_pairs, full_graph=True)
    items = [(xv[0], xv[1])] + ([(xv[2], xv[3]), (xv[3], xv[2])] if xv.sum() > 0 else [])
    want = sorted(((float(a), float(b)) for a, b in items), reverse=True)
    for got in (branch_pairs(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
        assert [(float(a), float(b)) for a, b in got] == want
