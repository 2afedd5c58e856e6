"""Softmax and LayerNorm as one CUDA kernel each (`runtime/program/cuda_rows.py`), tested
without a GPU: on the fake CuPy with `tests/cuda_host.py`, which compiles the kernel text
handed to `cupy.RawKernel` as host C++ and runs its blocks one after another, a thread per
CUDA thread. Values against NumPy references and the CPU path on row lengths below, at and
above one block's threads; gradients (the rules are unchanged) against the CPU's; where the
kernels do not apply the array code runs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.program import cuda_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cuda_host
import fake_cupy

pytestmark = pytest.mark.skipif(cuda_host.COMPILER is None, reason="no C++ compiler")


def numpy_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def numpy_layer_norm(x, w, b, k, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    xd = x.astype(np.float64)
    y = (xd - xd.mean(axes, keepdims=True)) / np.sqrt(xd.var(axes, keepdims=True) + eps)
    flat = x.shape[-k:]
    y = y * (1.0 if w is None else w.reshape(flat)) + (0.0 if b is None else b.reshape(flat))
    return y.astype(x.dtype)


def _fake_gpu(fn, *arrays):
    """`fn(*tensors)` on the fake GPU with compiled kernels: (outputs, kernels launched)."""
    made = len(cuda_host.RawKernel.made)
    with fake_cupy.installed(), cuda_host.installed():
        out = fn(*[None if a is None else rt.to_tensor(a) for a in arrays])
        out = [t.numpy() for t in (out if isinstance(out, (tuple, list)) else (out,))]
    return out, len(cuda_host.RawKernel.made) - made


_TOL = {"float32": (2e-6, 1e-7), "float64": (1e-13, 1e-15)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (3, 5), (2, 3, 33), (4, 256), (3, 300)])
def test_softmax_kernel_equals_numpy(dtype, shape):
    cuda_rows._kernels.clear()
    x = (np.random.default_rng(1).standard_normal(shape) * 4).astype(dtype)
    (got,), made = _fake_gpu(lambda t: F.softmax(t, axis=-1), x)
    assert made == 1
    rtol, atol = _TOL[dtype]
    np.testing.assert_allclose(got, numpy_softmax(x), rtol=rtol, atol=atol)
    np.testing.assert_allclose(got, F.softmax(rt.to_tensor(x), axis=-1).numpy(), rtol=rtol,
                               atol=atol)


def test_softmax_of_a_row_with_nan_or_inf():
    x = np.array([[1.0, np.nan, 2.0], [-np.inf, 0.0, 1.0], [np.inf, 0.0, 1.0]], "float32")
    (got,), _ = _fake_gpu(lambda t: F.softmax(t, axis=-1), x)
    with np.errstate(invalid="ignore"):
        want = numpy_softmax(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,k", [((4, 7), 1), ((2, 3, 40), 1), ((3, 6, 50), 2),
                                     ((2, 300), 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_kernel_equals_numpy(dtype, shape, k, affine):
    cuda_rows._kernels.clear()
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w = rng.standard_normal(shape[-k:]).astype(dtype) if affine else None
    b = rng.standard_normal(shape[-k:]).astype(dtype) if affine else None
    norm = list(shape[-k:])
    (got,), made = _fake_gpu(lambda t, wt, bt: F.layer_norm(t, norm, wt, bt), x, w, b)
    assert made == 1
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
    np.testing.assert_allclose(got, numpy_layer_norm(x, w, b, k), rtol=rtol, atol=atol)


def _attention_tail(q, k, v, w, b):
    """softmax(q @ k.T) @ v, then a LayerNorm: an attention block's two row kernels."""
    p = F.softmax(rt.matmul(q, k, transpose_y=True) * 0.25, axis=-1)
    return F.layer_norm(rt.matmul(p, v) + q, [q.shape[-1]], w, b)


def test_attention_tail_values_and_gradients_eager_and_static():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 5, 8)).astype("float64") for _ in range(3))
    w, b = rng.standard_normal(8), rng.standard_normal(8)

    def grads(*arrays):
        ts = [rt.to_tensor(a, stop_gradient=False) for a in arrays]
        out = _attention_tail(*ts)
        rt.sum(out * out).backward()
        return [out] + [t.grad for t in ts]

    want = [t.numpy() for t in grads(q, k, v, w, b)]
    got, made = _fake_gpu(lambda *ts: grads(*[t.numpy() for t in ts]), q, k, v, w, b)
    assert made == 2  # (one softmax and one LayerNorm kernel)
    assert len(got) == len(want)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    with fake_cupy.installed(), cuda_host.installed(), rt.no_grad():
        static = d2s.to_static(_attention_tail)
        out = static(*[rt.to_tensor(a) for a in (q, k, v, w, b)]).numpy()
    np.testing.assert_allclose(out, want[0], rtol=1e-10, atol=1e-12)


def test_where_the_kernels_do_not_apply_the_array_code_runs(monkeypatch):
    x = np.random.default_rng(4).standard_normal((3, 4, 5)).astype("float32")
    (got,), made = _fake_gpu(lambda t: F.softmax(t, axis=1), x)  # (not the last axis)
    assert made == 0
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-6)
    (got,), made = _fake_gpu(lambda t: F.softmax(t, axis=-1), x.astype("float16"))
    assert made == 0
    monkeypatch.setenv("D2S_NATIVE", "0")
    (got,), made = _fake_gpu(lambda t: F.softmax(t, axis=-1), x)
    assert made == 0
    np.testing.assert_allclose(got, numpy_softmax(x), rtol=1e-6)


def test_block_threads_are_a_power_of_two():
    assert [cuda_rows._threads(n) for n in (1, 32, 33, 200, 256, 257, 10**6)] == \
        [32, 32, 64, 256, 256, 256, 256]


@pytest.mark.gpu
def test_real_kernels_equal_numpy():
    pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 3, 300)).astype("float32") * 3
    w, b = rng.standard_normal(300).astype("float32"), rng.standard_normal(300).astype("float32")
    rt.set_device("gpu")
    try:
        got = F.softmax(rt.to_tensor(x), axis=-1).numpy()
        ln = F.layer_norm(rt.to_tensor(x), [300], rt.to_tensor(w), rt.to_tensor(b)).numpy()
    finally:
        rt.set_device("cpu")
    np.testing.assert_allclose(got, numpy_softmax(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ln, numpy_layer_norm(x, w, b, 1), rtol=1e-4, atol=1e-5)
