"""`math.sqrt(i)` & co. of the counter of a loop over `range(n_tensor)` (issue 35): eager code
gets a Python float (`floor` / `ceil`: an int); the program computes it as a float64 that
stands for that number (with a float16 tensor it stays float16, as a Python float does), and
raises Python's error (`math domain error`) when the program runs where eager raises. Eager vs
static vs NumPy, one program for every count, gradients against finite differences."""
import math
from math import floor

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import shown
from tests.finite_differences import numeric_grad


def scaled_by_roots(x, n):
    total = x * 0
    for i in range(n):                                    # an attention-style 1 / sqrt(d)
        total = total + x / math.sqrt(i + 1) + math.exp(i * 0.5) * math.log(i + 1)
        total = total + x * math.cos(i) * math.tanh(i - 1.5) + floor(i / 2) - math.ceil(i / 3)
        total = total + math.fabs(i - 2.5) + math.sin(float(i))
    return total


def reference_roots(x, n):
    total = x * 0
    for i in range(n):
        total = total + x / math.sqrt(i + 1) + math.exp(i * 0.5) * math.log(i + 1)
        total = total + x * math.cos(i) * math.tanh(i - 1.5) + floor(i / 2) - math.ceil(i / 3)
        total = total + math.fabs(i - 2.5) + math.sin(float(i))
    return total


X = np.array([0.5, -1.25, 2.0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_math_of_the_counter_matches_eager_and_numpy(dtype):
    static = d2s.to_static(scaled_by_roots, full_graph=True)
    for n in (0, 1, 4):
        want = reference_roots(X, n)
        for fn in (scaled_by_roots, static):
            got = fn(rt.to_tensor(X.astype(dtype)), rt.to_tensor(n))
            assert got.dtype == rt.to_tensor(X.astype(dtype)).dtype   # a Python float's dtype
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-3 if dtype == "float16"
                                       else 1e-6)
    assert len(static.program_cache) == 1


def test_math_of_the_counter_gradient():
    static = d2s.to_static(scaled_by_roots, full_graph=True)
    t = rt.to_tensor(X, stop_gradient=False)
    static(t, rt.to_tensor(4)).sum().backward()
    want = numeric_grad(lambda v: reference_roots(v, 4).sum(), X)
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-6)


def shifted_root(x, n):
    total = x.sum()
    for i in range(n):
        total = total + math.sqrt(i - 1)              # i = 0: Python's ValueError
    return total


def test_a_domain_error_is_raised_when_the_program_runs():
    static = d2s.to_static(shifted_root, full_graph=True)
    np.testing.assert_allclose(static(rt.ones([2]), rt.to_tensor(0)).numpy(), 2.0)
    for fn in (shifted_root, static):
        with pytest.raises(ValueError, match="math domain error") as e:
            fn(rt.ones([2]), rt.to_tensor(2))
    line = shifted_root.__code__.co_firstlineno + 3
    assert f'File "{__file__}", line {line}' in shown(e.value)


def test_an_overflow_and_a_nan_floor_are_raised_as_eagerly():
    def grown(x, n):
        total = x.sum()
        for i in range(n):
            total = total + math.exp(i * 400.0) * 0 + floor(float(x[0]) * i)
        return total

    static = d2s.to_static(grown, full_graph=True)
    np.testing.assert_allclose(static(rt.ones([2]), rt.to_tensor(2)).numpy(), 3.0)
    for fn in (grown, static):
        with pytest.raises(OverflowError, match="math range error"):
            fn(rt.ones([2]), rt.to_tensor(3))                 # exp(800)
        with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
            fn(rt.to_tensor([float("nan"), 1.0]), rt.to_tensor(2))
