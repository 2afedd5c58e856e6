"""`sorted()`, `list.sort()` and `max(key=...)` of Python numbers the program computes
(`float(row.max())` per row, `x.tolist()`) give Python numbers, as eagerly; they came back
as float64 Tensors (silently)."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


def ranked_scores(x):
    scores = [float(row.max()) for row in x]
    ranked = sorted(scores, reverse=True)
    firsts = x.tolist()[0]
    firsts.sort()
    best = max(range(len(scores)), key=lambda i: scores[i])
    return ranked, firsts, best, ranked[0] - ranked[-1]


def test_sorted_numbers_stay_python_numbers():
    converted = d2s.to_static(ranked_scores)
    for seed in (0, 1, 2):
        x = np.random.default_rng(seed).standard_normal((3, 4)).astype("float32")
        eager, static = ranked_scores(rt.to_tensor(x)), converted(rt.to_tensor(x))
        ref_scores = [float(r.max()) for r in x]
        ref = (sorted(ref_scores, reverse=True), sorted(float(v) for v in x[0]),
               int(np.argmax(ref_scores)))
        for got, want, expect in zip(static[:2], eager[:2], ref[:2], strict=True):
            assert len(got) == len(want) == len(expect)
            assert all(type(v) is float for v in got), got
            np.testing.assert_allclose(got, want, rtol=1e-7)
            np.testing.assert_allclose(got, expect, rtol=1e-6)
        assert type(static[2]) is int and static[2] == eager[2] == ref[2]
        assert type(static[3]) is float
    assert len(converted.program_cache) == 1
