"""`matmul_rows` (runtime/ops/linalg.py): x [..., k] @ y [k, n] as one GEMM over all of x's
rows, used by the `matmul` and `linear` kernels and by the converted program's direct calls
(runtime/program/codegen.py). Checked against NumPy's batched matmul and a float64 reference,
eagerly and converted, values and gradients (finite differences), on odd shapes, transposed
and non-contiguous operands.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
from runtime.ops.linalg import matmul_rows
from runtime.program import codegen

SHAPES = [((3, 5, 7), (7, 4)), ((2, 3, 5, 7), (7, 1)), ((1, 1, 3), (3, 6)), ((4, 2), (2, 3)),
          ((2, 3, 4), (2, 4, 5))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape, y_shape", SHAPES)
def test_matmul_rows_equals_numpy_matmul(x_shape, y_shape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(dtype)
    y = rng.standard_normal(y_shape).astype(dtype)
    out = matmul_rows(np, x, y)
    ref = np.matmul(x.astype("float64"), y.astype("float64"))
    assert out.shape == ref.shape and out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, ref, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5)


def test_matmul_rows_takes_transposed_and_strided_operands():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 7, 6)).swapaxes(1, 2)  # not C-contiguous: NumPy's own matmul
    y = rng.standard_normal((5, 7)).T  # a transposed matrix: one GEMM with y transposed
    np.testing.assert_allclose(matmul_rows(np, x, y), np.matmul(x, y), rtol=1e-12)
    xc = np.ascontiguousarray(x)
    np.testing.assert_allclose(matmul_rows(np, xc, y), np.matmul(x, y), rtol=1e-12)


def test_the_converted_program_folds_batched_rows():
    assert isinstance(codegen.matmul_call((2, 3, 4), (4, 5)), functools.partial)
    assert codegen.matmul_call((3, 4), (4, 5)) is np.matmul
    assert codegen.matmul_call((2, 3, 4), (2, 4, 5)) is np.matmul


class Projection(rt.nn.Layer):
    """A Transformer-style block: a linear on [batch, seq, features], then a product with
    another weight transposed, relu in between."""

    def __init__(self, k, n):
        super().__init__()
        self.fc = rt.nn.Linear(k, n)
        self.w = self.create_parameter([3, n])

    def forward(self, x):
        return rt.matmul(rt.nn.functional.relu(self.fc(x)), self.w, transpose_y=True)


def reference(x, w1, b1, w2):
    return np.maximum(x @ w1 + b1, 0) @ w2.T


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape", [(2, 5, 7), (3, 1, 2, 7), (4, 7)])
def test_eager_and_converted_equal_the_numpy_reference(x_shape, dtype):
    rt.seed(0)
    rt.set_default_dtype(dtype)
    try:
        layer = Projection(7, 6)
    finally:
        rt.set_default_dtype("float32")
    static = d2s.to_static(layer)
    w1, b1, w2 = (p.numpy().astype("float64") for p in (layer.fc.weight, layer.fc.bias,
                                                           layer.w))
    tol = 1e-4 if dtype == "float32" else 1e-10
    # inputs whose relu is active in different places go through the one converted program
    for seed in (1, 2):
        x = np.random.default_rng(seed).standard_normal(x_shape).astype(dtype)
        ref = reference(x.astype("float64"), w1, b1, w2)
        eager = layer(rt.to_tensor(x))
        converted = static(rt.to_tensor(x))
        assert eager.shape == converted.shape == list(ref.shape)
        np.testing.assert_allclose(eager.numpy(), ref, rtol=tol, atol=tol)
        np.testing.assert_allclose(converted.numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("converted", [False, True])
def test_gradients_equal_finite_differences(converted):
    rt.seed(0)
    rt.set_default_dtype("float64")
    try:
        layer = Projection(4, 3)
    finally:
        rt.set_default_dtype("float32")
    call = d2s.to_static(layer) if converted else layer
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    w1, b1, w2 = (p.numpy() for p in (layer.fc.weight, layer.fc.bias, layer.w))
    xt = rt.to_tensor(x, stop_gradient=False)
    (call(xt) ** 2).sum().backward()
    expected = {
        "x": numeric_grad(lambda a: (reference(a, w1, b1, w2) ** 2).sum(), x),
        "fc.weight": numeric_grad(lambda a: (reference(x, a, b1, w2) ** 2).sum(), w1),
        "fc.bias": numeric_grad(lambda a: (reference(x, w1, a, w2) ** 2).sum(), b1),
        "w": numeric_grad(lambda a: (reference(x, w1, b1, a) ** 2).sum(), w2),
    }
    got = {"x": xt.grad, "fc.weight": layer.fc.weight.grad, "fc.bias": layer.fc.bias.grad,
           "w": layer.w.grad}
    for name, value in expected.items():
        np.testing.assert_allclose(got[name].numpy(), value, rtol=1e-6, atol=1e-8,
                                   err_msg=name)
