"""The generated-C LayerNorm forward (runtime/program/layernorm_native.py) against the NumPy
path it replaces (runtime/ops/nn_norm.py) and a float64 reference: float32 and float64, odd row
lengths, normalisation over one or several trailing axes, with and without weight and bias,
strided inputs; float16 runs the NumPy path; gradients against finite differences, eagerly and
converted.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.ops import nn_norm
from runtime.program import layernorm_native, native_build

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")


def reference(x, w, b, begin, eps=1e-5):
    axes = tuple(range(begin % x.ndim, x.ndim))
    xc = x - x.mean(axis=axes, keepdims=True)
    y = xc / np.sqrt((xc * xc).mean(axis=axes, keepdims=True) + eps)
    shape = x.shape[begin % x.ndim:]
    y = y if w is None else y * w.reshape(shape)
    return y if b is None else y + b.reshape(shape)


@pytest.fixture
def answered(monkeypatch, tmp_path):
    """The C kernel compiled on the calling thread into a fresh cache; counts its answers."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native_build, "_ready", {})
    count = [0]

    def counting(*args):
        out = layernorm_native.layer_norm(*args)
        count[0] += out is not None
        return out

    monkeypatch.setitem(nn_norm.NATIVE_KERNELS, "layer_norm", counting)
    return count


CASES = [((16, 64, 256), 1), ((3, 7), 1), ((2, 5, 3, 4), 2), ((4, 1), 1), ((2, 3, 33), 1)]


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, trailing", CASES)
def test_values_equal_the_numpy_path(shape, trailing, dtype, affine, answered):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    norm_shape = shape[-trailing:]
    w = rng.standard_normal(norm_shape).astype(dtype) if affine else None
    b = rng.standard_normal(norm_shape).astype(dtype) if affine else None
    out = F.layer_norm(rt.to_tensor(x), list(norm_shape),
                       None if w is None else rt.to_tensor(w),
                       None if b is None else rt.to_tensor(b)).numpy()
    assert answered[0] == 1
    assert out.dtype == np.dtype(dtype) and out.shape == x.shape
    tol = 2e-5 if dtype == "float32" else 1e-12
    ref = reference(x.astype("float64"), w, b, -trailing)
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, reference(x, w, b, -trailing), rtol=tol, atol=tol)


def test_strided_input_and_float16(answered):
    x = np.random.default_rng(1).standard_normal((4, 6, 5)).astype("float32")
    view = x.transpose(1, 0, 2)
    out = F.layer_norm(rt.to_tensor(view), [5]).numpy()
    np.testing.assert_allclose(out, reference(view.astype("float64"), None, None, -1),
                               rtol=2e-5, atol=2e-5)
    assert answered[0] == 1
    half = F.layer_norm(rt.to_tensor(x.astype("float16")), [5]).numpy()
    assert answered[0] == 1 and half.dtype == np.float16  # the NumPy path
    np.testing.assert_allclose(half, reference(x.astype("float64"), None, None, -1),
                               rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("converted", [False, True])
def test_gradients_against_finite_differences(converted, answered):
    rt.seed(0)
    rt.set_default_dtype("float64")
    try:
        norm = rt.nn.LayerNorm(6)
    finally:
        rt.set_default_dtype("float32")
    rng = np.random.default_rng(2)
    norm.weight.set_value(rng.standard_normal(6))
    norm.bias.set_value(rng.standard_normal(6))
    call = d2s.to_static(norm) if converted else norm
    w, b = norm.weight.numpy(), norm.bias.numpy()
    for scale in (1.0, 100.0):  # inputs of different spread through one program
        xa = rng.standard_normal((2, 3, 6)) * scale
        x = rt.to_tensor(xa, stop_gradient=False)
        out = call(x)
        np.testing.assert_allclose(out.numpy(), reference(xa, w, b, -1), rtol=1e-10,
                                   atol=1e-10)
        (out ** 3).sum().backward()
        expected = numeric_grad(lambda a: (reference(a, w, b, -1) ** 3).sum(), xa,
                                eps=1e-6 * scale)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert answered[0] >= 2
