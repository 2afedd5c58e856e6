"""Tests that fail on bugs planted where no test looked before: the gradient flag of a tensor
array joined to a Python list on its left (`[c] + arr`), and the dtype check of the fast call
path (a program traced for float32 must not run float64 or int64 inputs)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def grow(x, n):
    items = []
    i = rt.zeros([], "int64")
    while i < n:  # a tensor loop: `items` becomes a tensor array
        items.append(x * (i.astype(x.dtype) + 1.0))
        i = i + 1
    return [rt.ones([2], x.dtype)] + items  # a constant on the left of the array's +


def _loss(out):
    total = out[0].sum()
    for t in out[1:]:
        total = total + (t * t).sum()
    return total


@pytest.mark.parametrize("n", [3, 1])
def test_a_constant_left_of_an_array_keeps_the_arrays_gradient(n):
    static = d2s.to_static(grow)
    x0 = np.array([1.0, -2.0])

    def reference(x):
        return 1.0 * 2 + sum(float(((x * (k + 1)) ** 2).sum()) for k in range(n))

    want = numeric_grad(reference, x0)
    for fn in (grow, static):
        x = rt.to_tensor(x0, stop_gradient=False)
        out = fn(x, rt.to_tensor(n))
        assert len(out) == n + 1
        loss = _loss(out)
        assert not loss.stop_gradient
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


def shifted(x):
    return x * 0.1 + rt.full(x.shape, 1.0 / 3.0, x.dtype)


def test_the_fast_call_path_runs_no_program_on_another_dtype():
    static = d2s.to_static(shifted)
    a = np.array([1.0, 2.0, 3.0])
    for _ in range(4):  # the third call of a signature builds its fast caller
        static(rt.to_tensor(a.astype("float32")))
    for dtype in ("float64", "float32", "int64", "float64"):
        x = rt.to_tensor(a.astype(dtype))
        want, got = shifted(x), static(x)
        assert got.dtype == want.dtype, dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if dtype == "float64":  # float32's 0.1 and 1/3 would show here
            np.testing.assert_array_equal(got.numpy(), a * 0.1 + 1.0 / 3.0)
