"""Issue 12, item 10 follow-up: `max`, `min`, `any`, `all` of a comprehension filtered by a
tensor (a tensor array whose length is decided when the program runs). `max` / `min` of
one-element items is the largest / smallest item; empty, Python's ValueError when the program
runs (eager raises it too). `any` / `all` are bool tensors (False / True when empty, as
Python). Items of more elements: a TypeError naming the line (their truth is ambiguous).

Eager vs static vs NumPy through ONE program, inputs keeping different items (and none).
"""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

ROWS = [[1.0, 2.0], [-1.0, -2.0], [2.0, 3.0], [0.5, -0.25]]


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


def largest_kept(x):
    parts = (x, x * 2.0, -x)
    return max(p.sum() for p in parts if p.mean() > 0), min([p.max() for p in parts
                                                             if p.mean() > 0])


def _largest_kept_ref(a):
    kept = [p for p in (a, a * 2, -a) if p.mean() > 0]
    return max(p.sum() for p in kept), min(p.max() for p in kept)


def test_max_and_min_of_filtered_items():
    static = d2s.to_static(largest_kept)
    for row in ROWS:
        want, got = largest_kept(_t(row)), static(_t(row))
        ref = _largest_kept_ref(np.asarray(row, "float64"))
        for w, g, r in zip(want, got, ref, strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, err_msg=str(row))
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-5, err_msg=str(row))
    assert len(static.program_cache) == 1


def best_score(x):
    return max(s for s in (x[0], x[1], x[0] * x[1]) if s > 1.0)


def test_max_of_an_empty_filtered_list_raises_pythons_value_error_when_run():
    static = d2s.to_static(best_score)
    np.testing.assert_allclose(static(_t([2.0, 3.0])).numpy(), 6.0)
    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        best_score(_t([0.5, 0.5]))
    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        static(_t([0.5, 0.5]))
    np.testing.assert_allclose(static(_t([-2.0, 1.5])).numpy(), 1.5)
    assert len(static.program_cache) == 1


def test_max_gradient_matches_finite_differences():
    static = d2s.to_static(best_score)
    for row in ([2.0, 3.0], [-2.0, 1.5], [3.0, 0.2]):
        x = _t(row)
        x.stop_gradient = False
        static(x).backward()
        want = numeric_grad(lambda a: float(best_score(rt.to_tensor(a.astype("float32")))
                                            .item()), np.asarray(row, "float64"), eps=1e-3)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-2, atol=1e-2)


def any_all(x):
    parts = [x, x * 2.0, -x, x - 1.0]
    big = any(p.sum() > 3 for p in parts if p.mean() > 0)
    small = all([p.max() < 3 for p in parts if p.mean() > 0])
    y = x if big else -x  # eager: Python bools; static: bool tensors (graph `if`s)
    if small:
        z = x * 2.0
    else:
        z = x
    return y, z


def _any_all_ref(a):
    kept = [p for p in (a, a * 2, -a, a - 1) if p.mean() > 0]
    big = any(p.sum() > 3 for p in kept)
    small = all(p.max() < 3 for p in kept)
    return (a if big else -a), (a * 2 if small else a)


def test_any_and_all_of_filtered_items():
    static = d2s.to_static(any_all)
    for row in ROWS + [[0.0, 0.0]]:  # the last keeps nothing: any False, all True
        want, got = any_all(_t(row)), static(_t(row))
        ref = _any_all_ref(np.asarray(row, "float64"))
        for w, g, r in zip(want, got, ref, strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), err_msg=str(row))
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-6, err_msg=str(row))
    assert len(static.program_cache) == 1


def max_of_vectors(x):
    return max(p for p in (x, -x) if p.sum() > 0)


def test_max_of_vector_items_is_a_clear_error():
    with pytest.raises(TypeError, match="rt.stack\\(items\\).max\\(0\\)") as info:
        d2s.to_static(max_of_vectors)(_t([1.0, 2.0]))
    assert "test_filtered_reductions.py" in str(info.value)
