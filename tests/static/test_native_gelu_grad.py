"""GELU's gradient as one op, `gelu_grad(x, dy)` (exact and tanh form): a program's backward of
`F.gelu` reads x and the incoming gradient only, and runs as one fused loop (generated C, or
the chunked NumPy code calling the op's kernel); its values against the closed-form
derivative in float64 and eager mode, and the gradients of converted functions (GELU alone,
and a fused chain ending in GELU) against finite differences."""
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
SHAPE = (1024, 300)  # a single op is fused from 256K elements (`fusion.PARALLEL_ELEMENTS`)
_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def _np_gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf64(x / math.sqrt(2)))


def _np_gelu_derivative(x, approximate):
    x = x.astype(np.float64)
    if approximate:
        c, k = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(c * (x + k * x ** 3))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * k * x * x)
    return 0.5 * (1 + _erf64(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _inputs(shape, dtype, seed=0):
    """Both signs, zeros, tiny values, the clamped tails of erf and tanh, and large values
    where the derivative is 0 or 1."""
    x = np.random.default_rng(seed).standard_normal(shape) * 3.0
    flat = x.reshape(-1)
    flat[:8] = [0.0, -0.0, 1e-20, -1e-3, 4.5, -4.5, 30.0, -30.0]
    flat[8:20] = np.linspace(-12.0, 12.0, 12)
    return x.astype(dtype)


def gelu_exact(x):
    return F.gelu(x)


def gelu_tanh(x):
    return F.gelu(x, approximate=True)


def _gradient(fn, xa, monkeypatch, native):
    """x's gradient of `fn(x) * dy` summed, converted, with its fused runs in C (`"sync"`) or
    chunked NumPy code (`"0"`); dy, the backward program's op types, the training program
    and the backward's number of C calls."""
    monkeypatch.setenv("D2S_NATIVE", native)
    sf = d2s.to_static(fn)
    x = rt.to_tensor(xa, stop_gradient=False)
    out = sf(x)
    dy = rt.to_tensor(_inputs(xa.shape, xa.dtype, seed=1))
    before = native_build.stats()["native_calls"]
    (out * dy).sum().backward()
    calls = native_build.stats()["native_calls"] - before
    training = sf.program_cache.last_entry._training
    ops = [op.type for op in training.split.backward.global_block().ops]
    return x.grad.numpy(), dy.numpy(), ops, training, calls


@pytest.mark.parametrize("fn, approximate", [(gelu_exact, False), (gelu_tanh, True)],
                         ids=["exact", "tanh"])
# float32: the tanh form's 1 + t and 1 - t^2 cancel where t nears -1 (x below -3), so its
# derivative is good to a few 1e-6 absolute (measured: 4.2e-6 in C, 1.2e-6 with NumPy's tanh)
@pytest.mark.parametrize("dtype, tol", [("float32", 6e-6), ("float64", 1e-13)])
def test_backward_of_gelu_is_one_loop_from_x_and_dy(monkeypatch, fn, approximate, dtype, tol):
    xa = _inputs(SHAPE, dtype)
    got, dy, ops, training, calls = _gradient(fn, xa, monkeypatch, "sync")
    assert ops == ["gelu_grad"]
    assert training.split.saved == []  # nothing saved by the forward: x is an input
    assert calls == 1  # the backward: one C call
    want = dy.astype(np.float64) * _np_gelu_derivative(xa, approximate)
    scale = np.maximum(np.abs(dy), 1.0)  # (an error in the derivative, times dy)
    assert got.shape == want.shape
    assert (np.abs(got - want) <= tol * scale).all()
    chunked, _, _, _, calls = _gradient(fn, xa, monkeypatch, "0")
    assert calls == 0
    x = rt.to_tensor(xa, stop_gradient=False)
    (fn(x) * rt.to_tensor(dy)).sum().backward()
    eager = x.grad.numpy()
    np.testing.assert_array_equal(chunked, eager)  # the op's kernel, chunk by chunk
    assert (np.abs(eager - want) <= tol * scale).all()
    assert got.dtype == eager.dtype == np.dtype(dtype)


@pytest.mark.parametrize("fn", [gelu_exact, gelu_tanh], ids=["exact", "tanh"])
def test_gelu_grad_with_nan_and_infinities_is_eagers(monkeypatch, fn):
    xa = _inputs(SHAPE, "float32")
    xa.reshape(-1)[20:24] = [np.nan, np.inf, -np.inf, 1e30]
    with np.errstate(all="ignore"):
        got, dy, _, _, _ = _gradient(fn, xa, monkeypatch, "sync")
        x = rt.to_tensor(xa, stop_gradient=False)
        (fn(x) * rt.to_tensor(dy)).sum().backward()
    eager = x.grad.numpy()
    assert np.isnan(got.reshape(-1)[20])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(eager))
    np.testing.assert_array_equal(got.reshape(-1)[20:24], eager.reshape(-1)[20:24])


class GeluProjection(rt.nn.Layer):
    """A linear layer's output scaled, shifted and passed through GELU: the backward's fused
    run is gelu_grad followed by the scale's product."""

    def __init__(self, approximate):
        super().__init__()
        self.fc = rt.nn.Linear(6, 8)
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(self.fc(x) * 1.5 - 0.25, approximate=self.approximate)


@pytest.mark.parametrize("approximate", [False, True])
def test_chain_ending_in_gelu_gradients_equal_finite_differences(monkeypatch, approximate):
    monkeypatch.setenv("D2S_FUSION", "test")  # (small runs fused too)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    rt.seed(5)
    layer = GeluProjection(approximate)
    layer.to(dtype="float64")
    w, b = layer.fc.weight.numpy(), layer.fc.bias.numpy()
    static = d2s.to_static(layer)
    for xa in (_inputs((5, 6), "float64"), _inputs((5, 6), "float64", seed=2) * 0.1):
        grads = []
        for run in (layer, static):
            layer.clear_gradients()
            x = rt.to_tensor(xa, stop_gradient=False)
            (run(x) ** 2).sum().backward()
            grads.append((x.grad.numpy(), layer.fc.weight.grad.numpy()))
        (eager_x, eager_w), (got_x, got_w) = grads

        def loss_x(xv, w=w):
            return float((_np_gelu((xv @ w + b) * 1.5 - 0.25, approximate) ** 2).sum())

        def loss_w(wv, xa=xa):
            return float((_np_gelu((xa @ wv + b) * 1.5 - 0.25, approximate) ** 2).sum())

        for got, eager, want in ((got_x, eager_x, numeric_grad(loss_x, xa)),
                                 (got_w, eager_w, numeric_grad(loss_w, w))):
            assert got.shape == want.shape == eager.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(got, eager, rtol=1e-10, atol=1e-12)
    backward = static.forward.program_cache.last_entry._training.split.backward
    assert "gelu_grad" in [op.type for op in backward.global_block().ops]


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("fn, approximate", [(gelu_exact, False), (gelu_tanh, True)],
                         ids=["exact", "tanh"])
def test_gradient_of_a_sum_reaches_the_c_call_as_one_element(monkeypatch, reduce, fn,
                                                              approximate):
    """`sf(x).sum().backward()`: dy is a stride-0 broadcast of one value; the backward's C
    call reads it so (a variant of its function) instead of an expanded copy."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    read = []
    real = np.ascontiguousarray

    def spy(a, *args, **kwargs):
        read.append(getattr(a, "strides", None))
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np, "ascontiguousarray", spy)  # (bound by the C call's caller)
    xa = _inputs(SHAPE, "float32")
    sf = d2s.to_static(fn)
    x = rt.to_tensor(xa, stop_gradient=False)
    before = native_build.stats()["native_calls"]
    getattr(sf(x), reduce)().backward()
    assert native_build.stats()["native_calls"] - before == 2  # forward, backward
    assert not any(s is not None and len(s) == 2 and not any(s) for s in read)  # no expansion
    seed = 1.0 if reduce == "sum" else 1.0 / xa.size
    want = seed * _np_gelu_derivative(xa, approximate)
    eager = rt.to_tensor(xa, stop_gradient=False)
    getattr(fn(eager), reduce)().backward()
    assert x.grad.shape == list(want.shape)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=0, atol=6e-6 * seed)
    np.testing.assert_allclose(x.grad.numpy(), eager.grad.numpy(), rtol=0, atol=6e-6 * seed)
