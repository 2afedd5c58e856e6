"""BatchNorm + ReLU forward and backward as generated CUDA kernels
(`runtime/program/cuda_batch_norm.py`), tested without a GPU: on the fake CuPy with
`tests/cuda_host.py`, which compiles the kernel text handed to `cupy.RawKernel` as host C++
and runs its blocks one after another, a thread per CUDA thread. Values against a NumPy
reference and the CPU path (the batch_norm op, then relu); gradients against the CPU path's
autograd and finite differences; channels of fewer and more elements than a block's threads,
training and eval, with and without weight and bias."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import runtime as rt
import runtime.nn.functional as F
from runtime.ops.nn_norm import batch_norm
from runtime.program import cuda_batch_norm as cbn
from tests.finite_differences import numeric_grad

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cuda_host
import fake_cupy

pytestmark = pytest.mark.skipif(cuda_host.COMPILER is None, reason="no C++ compiler")
EPS = 1e-5


def numpy_bn_relu(x, w, b, training, rmean, rvar):
    """relu(BatchNorm(x)) in float64 and the statistics it used."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = [1, -1] + [1] * (x.ndim - 2)
    xd = x.astype(np.float64)
    mean, var = (xd.mean(axes), xd.var(axes)) if training else (rmean, rvar)
    y = (xd - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS)
    y = y * (1.0 if w is None else w.reshape(shape)) + (0.0 if b is None else b.reshape(shape))
    return np.maximum(y, 0.0), mean, var


def _on_fake_gpu(fn, *arrays):
    """`fn(xp, *device arrays)` on the fake GPU with compiled kernels: host results, and how
    many kernels it made."""
    cbn._kernels.clear()
    made = len(cuda_host.RawKernel.made)
    with fake_cupy.installed() as xp, cuda_host.installed():
        out = fn(xp, *[None if a is None else xp.asarray(a) for a in arrays])
        out = [None if o is None else np.asarray(o.get()) for o in out]
    return out, len(cuda_host.RawKernel.made) - made


def _inputs(shape, dtype, affine, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = (rng.standard_normal(shape) * 2.0 + 0.3).astype(dtype)
    w = (rng.uniform(0.5, 1.5, c) * rng.choice([-1.0, 1.0], c)).astype(dtype) if affine else None
    b = rng.standard_normal(c).astype(dtype) if affine else None
    rmean = rng.standard_normal(c).astype(dtype)
    rvar = rng.uniform(0.5, 2.0, c).astype(dtype)
    return x, w, b, rmean, rvar


def _cpu_path(x, w, b, rmean, rvar, training, dy):
    """relu(batch_norm op) on the CPU and the gradients its rules give for output grad dy."""
    xt = rt.to_tensor(x, stop_gradient=False)
    wt, bt = (None if p is None else rt.to_tensor(p, stop_gradient=False) for p in (w, b))
    stats = (None, None) if training else (rt.to_tensor(rmean), rt.to_tensor(rvar))
    y, mean, var = batch_norm(xt, *stats, wt, bt, training=training, epsilon=EPS)
    out = F.relu(y)
    (out * rt.to_tensor(dy)).sum().backward()
    return (out.numpy(), mean.numpy(), var.numpy(), xt.grad.numpy(),
            None if wt is None else wt.grad.numpy(), None if bt is None else bt.grad.numpy())


SHAPES = [(4, 3), (2, 3, 5), (2, 4, 6, 6), (3, 2, 20, 10), (1, 2, 2, 3, 4)]
_TOL = {"float32": (2e-5, 2e-5), "float64": (1e-11, 1e-12)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_kernels_equal_numpy_and_the_cpu_path(dtype, shape, training, affine):
    x, w, b, rmean, rvar = _inputs(shape, dtype, affine)
    dy = np.random.default_rng(1).standard_normal(shape).astype(dtype)

    def on_gpu(xp, x, w, b, rmean, rvar, dy):
        y, mean, var = cbn.batch_norm_relu(xp, x, rmean, rvar, w, b, training, EPS)
        return (y, mean, var) + cbn.batch_norm_relu_grad(xp, dy, x, y, mean, var, w, b,
                                                         training, EPS)

    (y, mean, var, dx, dw, db), made = _on_fake_gpu(on_gpu, x, w, b, rmean, rvar, dy)
    assert made == 2  # the forward and the backward kernel
    rtol, atol = _TOL[dtype]
    want_y, want_mean, want_var = numpy_bn_relu(x, w, b, training, rmean, rvar)
    np.testing.assert_allclose(y, want_y, rtol=rtol, atol=atol)
    np.testing.assert_allclose(mean, want_mean, rtol=rtol, atol=atol)
    np.testing.assert_allclose(var, want_var, rtol=rtol, atol=atol)
    cpu = _cpu_path(x, w, b, rmean, rvar, training, dy)
    for name, got, want in zip(("y", "mean", "var", "dx", "dweight", "dbias"),
                               (y, mean, var, dx, dw, db), cpu, strict=True):
        if want is None:
            assert got is None and not affine, name
            continue
        assert got.dtype == want.dtype == np.dtype(dtype), name
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * 10, err_msg=name)
    assert (y == 0).any() and (y > 0).any()  # both sides of the ReLU taken


@pytest.mark.parametrize("training", [True, False])
def test_gradients_equal_finite_differences(training):
    x, w, b, rmean, rvar = _inputs((3, 2, 4, 5), "float64", True, seed=2)
    dy = np.random.default_rng(3).standard_normal(x.shape)

    def gpu_grads(xp, x, w, b, rmean, rvar, dy):
        y, mean, var = cbn.batch_norm_relu(xp, x, rmean, rvar, w, b, training, EPS)
        return cbn.batch_norm_relu_grad(xp, dy, x, y, mean, var, w, b, training, EPS)

    (dx, dw, db), _ = _on_fake_gpu(gpu_grads, x, w, b, rmean, rvar, dy)
    for got, wrt in ((dx, "x"), (dw, "w"), (db, "b")):
        args = {"x": x, "w": w, "b": b}

        def loss(v, wrt=wrt, args=args):
            return float((numpy_bn_relu(**{**args, wrt: v}, training=training, rmean=rmean,
                                        rvar=rvar)[0] * dy).sum())

        want = numeric_grad(loss, args[wrt])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=wrt)


def test_nan_stays_nan_and_channels_wider_than_a_block():
    x, w, b, _, _ = _inputs((2, 3, 30, 30), "float32", True)  # 1800 per channel
    x[1, 2, 3, 4] = np.nan

    def on_gpu(xp, x, w, b):
        return cbn.batch_norm_relu(xp, x, None, None, w, b, True, EPS)

    (y, mean, var), _ = _on_fake_gpu(on_gpu, x, w, b)
    assert cbn.threads_for(2 * 900) == cbn.MAX_THREADS
    assert np.isnan(y[:, 2]).all() and np.isnan(mean[2]) and np.isnan(var[2])
    want, *_ = numpy_bn_relu(x[:, :2], w[:2], b[:2], True, None, None)
    np.testing.assert_allclose(y[:, :2], want, rtol=2e-5, atol=2e-5)


def test_where_the_kernels_do_not_apply():
    x, w, b, rmean, rvar = _inputs((2, 3, 4), "float32", True)
    assert cbn.batch_norm_relu(np, x, rmean, rvar, w, b, False, EPS) is None  # NumPy
    with fake_cupy.installed() as xp, cuda_host.installed():
        dx = xp.asarray(x)
        assert cbn.batch_norm_relu(xp, dx, None, None, w, b, False, EPS) is None  # no stats
        assert cbn.batch_norm_relu(xp, dx.astype("float16"), None, None, None, None, True,
                                   EPS) is None
        assert cbn.batch_norm_relu(xp, dx, None, None, xp.asarray(w[:2]), None, True,
                                   EPS) is None  # a weight of another size


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_batch_norm_layer_on_the_gpu_runs_the_kernel_and_equals_the_cpu(training, data_format):
    """A Conv -> BatchNorm2D -> ReLU block, forward and backward: on the fake GPU the batch
    norm forward is the kernel (channels first; NHWC keeps the array code), and the values and
    gradients equal the CPU's."""
    rng = np.random.default_rng(4)
    xa = rng.standard_normal((2, 3, 5, 5)).astype("float32")
    if data_format == "NHWC":
        xa = xa.transpose(0, 2, 3, 1).copy()

    def run():
        rt.seed(0)
        conv = rt.nn.Conv2D(3, 4, 3, padding=1, data_format=data_format)
        bn = rt.nn.BatchNorm2D(4, data_format=data_format)
        bn.train() if training else bn.eval()
        x = rt.to_tensor(xa, stop_gradient=False)
        y = F.relu(bn(conv(x)))
        (y * y).sum().backward()
        return [t.numpy() for t in (y, x.grad, conv.weight.grad, bn.weight.grad, bn.bias.grad,
                                    bn._mean)]

    want = run()
    cbn._kernels.clear()
    made = len(cuda_host.RawKernel.made)
    with fake_cupy.installed(), cuda_host.installed():
        got = run()
    kernels = [name for _, name in cuda_host.RawKernel.made[made:]]
    assert kernels == (["d2s_cuda_batch_norm_relu_forward_float32"]
                       if data_format == "NCHW" else [])
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
