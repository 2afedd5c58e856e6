"""The generated-C max pooling (runtime/program/pool_native.py) gives the NumPy path's bits
(runtime/ops/nn_pool.py): maxima, the flat indices of the first maximum (ties, -inf, NaN,
windows reaching into the padding) and the scattered gradient (overlapping windows add in
double, in NumPy's order), eagerly and converted, gradients against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.ops import nn_pool
from runtime.program import native_build, pool_native

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")

# (x shape, kernel, stride, padding [top, bottom, left, right], ceil_mode): LeNet's 2x2,
# ResNet's 3x3 stride 2 with padding, overlapping windows, asymmetric padding, ceil mode,
# odd sizes, batch 1
CONFIGS = [
    ((32, 6, 28, 28), (2, 2), (2, 2), [0, 0, 0, 0], False),
    ((2, 8, 16, 16), (3, 3), (2, 2), [1, 1, 1, 1], False),
    ((1, 3, 7, 9), (3, 3), (1, 1), [1, 1, 1, 1], False),
    ((2, 2, 9, 7), (3, 2), (2, 3), [1, 0, 0, 1], False),
    ((1, 4, 7, 7), (2, 2), (2, 2), [0, 0, 0, 0], True),
    ((3, 1, 5, 11), (2, 3), (1, 2), [0, 1, 1, 1], True),
]
IDS = ["lenet", "resnet-stem", "overlap", "asymmetric", "ceil", "odd-ceil"]


@pytest.fixture
def answered(monkeypatch, tmp_path):
    """Native code compiled now into a fresh cache; counts the calls the C code answered."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native_build, "_ready", {})
    counts = dict.fromkeys(nn_pool.NATIVE_KERNELS, 0)

    def counting(name, fn):
        def call(*args):
            out = fn(*args)
            counts[name] += out is not None
            return out
        return call

    monkeypatch.setattr(nn_pool, "NATIVE_KERNELS", {
        name: counting(name, fn) for name, fn in nn_pool.NATIVE_KERNELS.items()})
    return counts


def _inputs(shape, dtype, seed):
    """Values with ties (small integers), -inf and a NaN."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 3)] = -np.inf
    flat[rng.integers(0, flat.size)] = np.nan
    return x


def _kernels(x, kernel, stride, padding, ceil_mode, g_seed=0):
    out, index = nn_pool._max_kernel(np, x, kernel, stride, padding, ceil_mode)
    g = np.random.default_rng(g_seed).standard_normal(out.shape).astype(x.dtype)
    return out, index, nn_pool._scatter_kernel(np, g, index, x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, kernel, stride, padding, ceil_mode", CONFIGS, ids=IDS)
def test_maxima_indices_and_gradient_are_numpys_bits(shape, kernel, stride, padding,
                                                     ceil_mode, dtype, answered, monkeypatch):
    x = _inputs(shape, dtype, 0)
    native = _kernels(x, kernel, stride, padding, ceil_mode)
    assert answered == {"max_pool2d": 1, "max_pool2d_grad": 1}
    monkeypatch.setattr(nn_pool, "NATIVE_KERNELS", {})
    numpy_path = _kernels(x, kernel, stride, padding, ceil_mode)
    assert len(native) == len(numpy_path) == 3
    for got, want in zip(native, numpy_path):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_a_maximum_in_the_padding_leaves_the_gradient_to_numpy(answered):
    """A window whose real cells are all -inf keeps its first cell, in the padding (as
    NumPy's argmax of the -inf-filled window); the C adjoint declines it."""
    x = np.full((1, 1, 3, 3), -np.inf, np.float32)
    out, index = nn_pool._max_kernel(np, x, (3, 3), (1, 1), [1, 1, 1, 1])
    assert index[0, 0, 0, 0] == -4 and np.isneginf(out).all()
    g = np.ones(out.shape, np.float32)
    assert pool_native.max_pool_grad(np, g, index, x.shape) is None


def pool_loss(x):
    y = F.max_pool2d(F.relu(x), kernel_size=3, stride=2, padding=1)
    if y.mean() > 0.5:  # a tensor `if`: both branches read the pooled values
        y = y * 2.0
    return (y * y).sum()


def _reference(x):
    """float64 NumPy: relu, 3x3 stride 2 padding 1 max pooling, the branch, the loss."""
    h = np.pad(np.maximum(x, 0), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    ho, wo = (x.shape[2] - 1) // 2 + 1, (x.shape[3] - 1) // 2 + 1
    y = np.empty(x.shape[:2] + (ho, wo))
    for i in range(ho):
        for j in range(wo):
            y[:, :, i, j] = h[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
    if y.mean() > 0.5:
        y = y * 2.0
    return (y * y).sum()


@pytest.mark.parametrize("shift", [0.0, 1.5], ids=["unscaled", "scaled"])
def test_eager_and_converted_against_finite_differences(shift, answered):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 2, 5, 7)) + shift  # distinct values: no ties
    want = numeric_grad(_reference, x, 1e-6)
    for fn in (pool_loss, d2s.to_static(pool_loss)):
        xt = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        loss = fn(xt)
        loss.backward()
        np.testing.assert_allclose(loss.numpy(), _reference(x), rtol=1e-5)
        np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-4, atol=1e-4)
    assert answered["max_pool2d"] >= 2 and answered["max_pool2d_grad"] == 2
