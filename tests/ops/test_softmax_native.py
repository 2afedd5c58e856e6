"""The generated-C softmax (runtime/program/softmax_native.py) against the NumPy path it
replaces (runtime/ops/nn.py) and a float64 reference: values on float32 and float64, odd row
lengths, strided inputs, rows with -inf (masked attention), NaN and inf; where it does not
apply (another axis) the NumPy path runs; gradients against finite differences, eagerly and
converted, in an attention block whose masked and unmasked inputs take different paths.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.ops import nn as nn_ops
from runtime.program import native_build, softmax_native

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")


def numpy_softmax(x, axis=-1):
    """The NumPy path: the registered kernel with the C kernel taken out."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def answered(monkeypatch, tmp_path):
    """The C kernel compiled on the calling thread into a fresh cache; counts its answers."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native_build, "_ready", {})
    count = [0]

    def counting(xp, x, axis):
        out = softmax_native.softmax(xp, x, axis)
        count[0] += out is not None
        return out

    monkeypatch.setitem(nn_ops.NATIVE_KERNELS, "softmax", counting)
    return count


SHAPES = [(1, 1), (3, 7), (2, 4, 64, 64), (5, 33), (2, 3, 1000)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_values_equal_the_numpy_path(shape, dtype, answered):
    x = (np.random.default_rng(0).standard_normal(shape) * 4).astype(dtype)
    out = F.softmax(rt.to_tensor(x)).numpy()
    assert answered[0] == 1
    ref = numpy_softmax(x.astype("float64"))
    assert out.dtype == np.dtype(dtype) and out.shape == x.shape
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(out, ref, rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(out, numpy_softmax(x), rtol=tol * 10, atol=tol)


def test_strided_inputs_and_special_values(answered):
    x = np.random.default_rng(1).standard_normal((3, 6, 5)).astype("float32")
    x[0, 1, 2] = -np.inf  # a masked position
    x[1, 2, :] = -np.inf  # a row masked whole: NaN as NumPy gives
    x[2, 3, 4] = np.nan
    x[2, 4, 0] = np.inf
    view = x.transpose(0, 2, 1)  # not contiguous: the kernel takes a contiguous copy
    for a in (x, view):
        with np.errstate(invalid="ignore"):
            ref = numpy_softmax(a)
        out = F.softmax(rt.to_tensor(a)).numpy()
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
        np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-7)
    assert answered[0] == 2


def test_another_axis_runs_the_numpy_path(answered):
    x = np.random.default_rng(2).standard_normal((4, 5)).astype("float32")
    out = F.softmax(rt.to_tensor(x), axis=0).numpy()
    assert answered[0] == 0
    np.testing.assert_allclose(out, numpy_softmax(x, axis=0), rtol=1e-6)


def attention(q, k, mask):
    """softmax(q k^T / sqrt(d) + mask) @ k, summed squared: a scalar loss."""
    scores = rt.matmul(q, k, transpose_y=True) * (q.shape[-1] ** -0.5) + mask
    return (rt.matmul(F.softmax(scores, axis=-1), k) ** 2).sum()


def attention_reference(q, k, mask):
    w = numpy_softmax(q @ k.swapaxes(-1, -2) * q.shape[-1] ** -0.5 + mask)
    return ((w @ k) ** 2).sum()


@pytest.mark.parametrize("converted", [False, True])
def test_gradients_against_finite_differences(converted, answered):
    rng = np.random.default_rng(3)
    k = rt.to_tensor(rng.standard_normal((2, 5, 3)))
    fn = d2s.to_static(attention) if converted else attention
    # no mask, then one that hides the last two keys: different softmax inputs each call
    masks = [np.zeros((5, 5)), np.where(np.arange(5) < 3, 0.0, -1e9) * np.ones((5, 1))]
    for mask in masks:
        qa = rng.standard_normal((2, 5, 3))
        q = rt.to_tensor(qa, stop_gradient=False)
        loss = fn(q, k, rt.to_tensor(mask))
        np.testing.assert_allclose(float(loss), attention_reference(qa, k.numpy(), mask),
                                   rtol=1e-12)
        loss.backward()
        expected = numeric_grad(lambda a, m=mask: attention_reference(a, k.numpy(), m), qa)
        np.testing.assert_allclose(q.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
    assert answered[0] >= 2
