"""erf, sigmoid and GELU (exact and tanh form) as fused ops (`fusion.KERNEL_UNARY`): the
float32 erf of `runtime/program/native_math.py` in units in the last place against float64
erf over its whole range, the ops in generated C and in the chunked NumPy code against a
NumPy reference and eager mode, and the gradients of a converted GELU layer against finite
differences with the backward's fused runs in C."""
from __future__ import annotations

import math

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build
from tests.finite_differences import numeric_grad

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
F = rt.nn.functional

MAX_ULP = 6.5  # measured: 5.98 at x = 3.745 with multiply-adds (NumPy's float32 erf: 2)
_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got.astype(np.float64) - want) / np.spacing(
        np.abs(want).astype(np.float32)).astype(np.float64)


def _converted(fn, monkeypatch, *arrays, native="sync"):
    """`fn` converted and called with its fused runs in C (`native="sync"`, compiled now) or
    in chunked NumPy code (`"0"`), and how many C calls ran."""
    monkeypatch.setenv("D2S_NATIVE", native)
    sf = d2s.to_static(fn)
    before = native_build.stats()["native_calls"]
    with rt.no_grad():
        out = sf(*[rt.to_tensor(a) for a in arrays])
    assert " = FU" in sf.program_cache.last_entry.compiled.source  # (a fused run)
    return out.numpy(), native_build.stats()["native_calls"] - before


def _erf_times_one(x):
    return rt.erf(x) * 1.0  # (two ops: a run big enough to fuse; -0.0 stays -0.0)


def test_float32_erf_in_c_is_within_a_few_ulps_everywhere(monkeypatch):
    grid = np.linspace(-6.0, 6.0, 600_001, dtype=np.float32)
    tiny = np.float32(10.0) ** np.linspace(-30.0, 0.6, 100_000, dtype=np.float32)
    x = np.concatenate([grid, tiny, -tiny, [0.0, -0.0, np.inf, -np.inf]]).astype(np.float32)
    got, calls = _converted(_erf_times_one, monkeypatch, x)
    assert calls == 1  # the C function, not NumPy's code
    want = _erf64(x.astype(np.float64))
    ulps = _ulps(got, want)
    assert ulps.max() <= MAX_ULP, x[ulps.argmax()]
    assert ulps.mean() < 1.0
    assert np.abs(got).max() == 1.0  # never above 1, though the rational overshoots
    assert np.signbit(got[-3]) and got[-4] == 0.0 and not np.signbit(got[-4])
    np.testing.assert_array_equal(got[-2:], [1.0, -1.0])
    np.testing.assert_array_equal(got[np.abs(x) >= 4.0], np.sign(x[np.abs(x) >= 4.0]))


def test_erf_is_odd_and_nan_stays_nan(monkeypatch):
    x = np.linspace(-5.0, 5.0, 300_001, dtype=np.float32)  # symmetric about 0
    x[[7, 1000]] = np.nan
    got, calls = _converted(_erf_times_one, monkeypatch, x)
    assert calls == 1
    assert np.isnan(got[[7, 1000]]).all() and np.isfinite(np.delete(got, [7, 1000])).all()
    keep = ~np.isnan(x) & ~np.isnan(x[::-1])
    np.testing.assert_array_equal(got[keep], -got[::-1][keep])


def _np_gelu(x, approximate):
    x = x.astype(np.float64)
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf64(x / math.sqrt(2)))


def _np_sigmoid(x):
    x = x.astype(np.float64)
    return np.exp(-np.logaddexp(0.0, -x))


def gelu_block(x):
    return F.gelu(x) * 2.0 - 1.0


def gelu_tanh_block(x):
    return F.gelu(x, approximate=True) + 0.5


def swish_block(x):
    return x * F.sigmoid(x) + rt.erf(x)


CASES = [(gelu_block, lambda x: 2.0 * _np_gelu(x, False) - 1.0),
         (gelu_tanh_block, lambda x: _np_gelu(x, True) + 0.5),
         (swish_block, lambda x: x.astype(np.float64) * _np_sigmoid(x) + _erf64(x))]


def _inputs(shape, dtype):
    """Values that take every path of the functions: both signs, near 0, the clamped tails
    of erf and tanh, large negatives where GELU and sigmoid reach 0."""
    x = np.random.default_rng(0).standard_normal(shape) * 3.0
    flat = x.reshape(-1)
    flat[:8] = [0.0, -0.0, 1e-20, -1e-3, 4.5, -4.5, 30.0, -30.0]
    flat[8:20] = np.linspace(-12.0, 12.0, 12)
    return x.astype(dtype)


@pytest.mark.parametrize("fn, reference", CASES, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("dtype, tol", [("float32", 2e-6), ("float64", 1e-13)])
def test_fused_ops_in_c_and_in_chunks_equal_numpy_and_eager(monkeypatch, fn, reference, dtype,
                                                            tol):
    x = _inputs((512, 300), dtype)
    eager = fn(rt.to_tensor(x)).numpy()
    in_c, calls = _converted(fn, monkeypatch, x)
    assert calls == 1
    chunked, calls = _converted(fn, monkeypatch, x, native="0")
    assert calls == 0
    np.testing.assert_array_equal(chunked, eager)  # the op's own kernel, chunk by chunk
    want = reference(x)
    np.testing.assert_allclose(in_c, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(eager, want, rtol=tol, atol=tol)
    assert in_c.dtype == eager.dtype == np.dtype(dtype)


class FeedForward(rt.nn.Layer):
    def __init__(self, approximate):
        super().__init__()
        self.fc = rt.nn.Linear(6, 8)
        self.approximate = approximate

    def forward(self, x):
        h = F.gelu(self.fc(x), approximate=self.approximate)
        return h * F.sigmoid(h)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_layer_gradients_in_c_equal_finite_differences_and_eager(monkeypatch,
                                                                     approximate):
    monkeypatch.setenv("D2S_FUSION", "test")  # (small runs fused too)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    rt.seed(3)
    layer = FeedForward(approximate)
    layer.to(dtype="float64")
    w, b = layer.fc.weight.numpy().astype(np.float64), layer.fc.bias.numpy().astype(np.float64)
    xa = _inputs((5, 6), "float64")
    static = d2s.to_static(layer)
    grads = []
    for run in (layer, static):
        layer.clear_gradients()
        x = rt.to_tensor(xa, stop_gradient=False)
        before = native_build.stats()["native_calls"]
        (run(x) ** 2).sum().backward()
        grads.append((x.grad.numpy(), native_build.stats()["native_calls"] - before))
    (eager, _), (got, calls) = grads
    assert calls >= 2  # the forward's and the backward's fused runs ran in C

    def loss(xv):
        h = _np_gelu(xv @ w + b, approximate)
        return float(((h * _np_sigmoid(h)) ** 2).sum())

    want = numeric_grad(loss, xa)
    assert got.shape == want.shape == eager.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got, eager, rtol=1e-10, atol=1e-12)
