"""Sorting by tuples that hold values the converted code computes, as decoding and ranking
code does: `max(zip(scores, ids))` (the best score, ties broken by id),
`sorted(zip(scores.tolist(), ids), reverse=True)`, a key returning `(int(s > t), i)`. Python
compares such tuples item by item; converted code raised `TypeError: bool() of a tensor
computed by the converted code` (sorted) or compared the tensors in Python (max/min). Now
the order is stable sorts by each item from the last, as Python's tuple order is, and ties
keep Python's choice (the first of equal keys)."""
import numpy as np
import pytest

import d2s
import runtime as rt

IDS = [10, 11, 12]


def rank_candidates(scores, ids):
    best_score, best_id = max(zip(scores, ids))
    worst = min(zip(scores.tolist(), ids))
    ranked = sorted(zip(scores.tolist(), ids), reverse=True)
    buckets = sorted([(int(s > 0.5), i) for s, i in zip(scores, ids)])
    return best_score, best_id, worst, ranked, buckets


def _np_rank(scores, ids):
    pairs = [(float(np.float32(s)), i) for s, i in zip(scores, ids)]
    best = max(pairs)
    return (best[0], best[1], min(pairs), sorted(pairs, reverse=True),
            sorted((int(np.float32(s) > 0.5), i) for s, i in zip(scores, ids)))


@pytest.mark.parametrize("scores", [[0.3, 0.9, 0.1], [0.7, 0.7, 0.1], [0.2, 0.1, 0.6]])
def test_sorts_by_tuples_are_eagers(scores):
    static = d2s.to_static(rank_candidates)
    args = (rt.to_tensor(np.float32(scores)), IDS)
    want, got = rank_candidates(*args), static(*args)
    ref = _np_rank(scores, IDS)
    assert isinstance(got[0], rt.Tensor) and got[0].dtype == want[0].dtype
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
    np.testing.assert_allclose(want[0].numpy(), ref[0])
    assert got[1:] == want[1:] == ref[1:]
    assert [type(v) for pair in got[3] for v in pair] == [float, int] * 3
    assert len(static.program_cache) == 1


def rank_names(scores, names):
    return [n for _, n in sorted(zip(scores.tolist(), names), reverse=True)]


@pytest.mark.parametrize("scores", [[0.2, 0.9, 0.9], [0.5, 0.5, 0.5], [0.3, 0.1, 0.2]])
def test_ties_broken_by_a_str_item_are_pythons(scores):
    names = ["code", "math", "chat"]
    static = d2s.to_static(rank_names)
    want = rank_names(rt.to_tensor(np.float32(scores)), names)
    got = static(rt.to_tensor(np.float32(scores)), names)
    ref = [n for _, n in sorted(zip(np.float32(scores).tolist(), names), reverse=True)]
    assert got == want == ref
