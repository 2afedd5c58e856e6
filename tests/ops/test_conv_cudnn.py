"""Convolutions through cuDNN on the GPU (`runtime/ops/conv_cudnn.py`), tested without a GPU:
the fake CuPy (tests/fake_cupy.py) has no cuDNN, so the GEMM path runs there; with a stand-in
`cupyx.cudnn` (each call computed pixel by pixel here, as cuDNN documents the three
operations) the forward and both gradients on every symmetric-padding configuration of the op
tests equal the CPU values, and the configurations cuDNN is not asked to do (uneven padding,
`D2S_CUDNN=0`) never reach it. That cuDNN itself computes these values is checked only by
benchmarks/gpu_check.sh on a GPU."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_conv_kernels import CONFIGS, IDS

import runtime as rt
import runtime.nn.functional as F
from runtime.ops import conv_cudnn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fake_cupy  # noqa: E402


def _windows(n_img, w_shape, out_hw, pad, stride, dilation, groups):
    """Every (image, out channel, in channel, out pixel, tap) with its padded input position."""
    o, cg, kh, kw = w_shape
    og = o // groups
    for b in range(n_img):
        for oc in range(o):
            for ci in range(cg):
                c = (oc // og) * cg + ci
                for i in range(out_hw[0]):
                    for j in range(out_hw[1]):
                        for p in range(kh):
                            for q in range(kw):
                                yield (b, oc, ci, c, i, j, p, q, i * stride[0] + p * dilation[0],
                                       j * stride[1] + q * dilation[1])


class StandInCudnn:
    """`cupyx.cudnn`'s three convolution calls, computed by definition on the fake arrays."""

    def __init__(self):
        self.calls = []

    def _check(self, name, pad, stride, dilation, groups, kw):
        assert kw["auto_tune"] is True and kw["tensor_core"] == "never"
        assert all(isinstance(t, tuple) and len(t) == 2 for t in (pad, stride, dilation))
        assert isinstance(groups, int)
        if name != "forward":
            assert kw["deterministic"] is True
        self.calls.append(name)

    def convolution_forward(self, x, w, b, y, pad, stride, dilation, groups, **kw):
        self._check("forward", pad, stride, dilation, groups, kw)
        assert b is None
        xa, wa = x._a, w._a
        xp = np.pad(xa, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
        out = np.zeros(y.shape, xa.dtype)
        for b_, oc, ci, c, i, j, p, q, r, s in _windows(xa.shape[0], wa.shape, y.shape[2:],
                                                        pad, stride, dilation, groups):
            out[b_, oc, i, j] += wa[oc, ci, p, q] * xp[b_, c, r, s]
        y._a[...] = out

    def convolution_backward_data(self, w, gy, b, gx, pad, stride, dilation, groups, **kw):
        self._check("backward_data", pad, stride, dilation, groups, kw)
        wa, ga = w._a, gy._a
        h, wd = gx.shape[2:]
        acc = np.zeros((gx.shape[0], gx.shape[1], h + 2 * pad[0], wd + 2 * pad[1]), ga.dtype)
        for b_, oc, ci, c, i, j, p, q, r, s in _windows(ga.shape[0], wa.shape, ga.shape[2:],
                                                        pad, stride, dilation, groups):
            acc[b_, c, r, s] += wa[oc, ci, p, q] * ga[b_, oc, i, j]
        gx._a[...] = acc[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd]

    def convolution_backward_filter(self, x, gy, gw, pad, stride, dilation, groups, **kw):
        self._check("backward_filter", pad, stride, dilation, groups, kw)
        xa, ga = x._a, gy._a
        xp = np.pad(xa, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
        acc = np.zeros(gw.shape, xa.dtype)
        for b_, oc, ci, c, i, j, p, q, r, s in _windows(xa.shape[0], gw.shape, ga.shape[2:],
                                                        pad, stride, dilation, groups):
            acc[oc, ci, p, q] += ga[b_, oc, i, j] * xp[b_, c, r, s]
        gw._a[...] = acc


def _conv_and_grads(x, w, gy, kwargs):
    """conv2d's value and the gradients of sum(y * gy) in x and w, as NumPy arrays."""
    xt, wt = rt.to_tensor(x), rt.to_tensor(w)
    xt.stop_gradient = wt.stop_gradient = False
    y = F.conv2d(xt, wt, **kwargs)
    (y * rt.to_tensor(gy)).sum().backward()
    return [y.numpy(), xt.grad.numpy(), wt.grad.numpy()]


def _arrays(x_shape, w_shape, kwargs, dtype="float64"):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    y = F.conv2d(rt.to_tensor(x), rt.to_tensor(w), **kwargs).numpy()
    return x, w, rng.standard_normal(y.shape).astype(dtype)


def _even(kwargs) -> bool:
    p = kwargs.get("padding", 0)
    return isinstance(p, str) or (p[0] == p[1] and p[2] == p[3])


def test_the_fake_cupy_has_no_cudnn_and_the_gemm_path_runs():
    x, w, gy = _arrays(*CONFIGS[0][:2], CONFIGS[0][2])
    want = _conv_and_grads(x, w, gy, CONFIGS[0][2])
    conv_cudnn._found.clear()
    with fake_cupy.installed() as cp:
        assert conv_cudnn.cudnn_of(cp) is None
        got = _conv_and_grads(x, w, gy, CONFIGS[0][2])
    assert conv_cudnn.cudnn_of(np) is None
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS, ids=IDS)
def test_cudnn_calls_equal_the_cpu_path(monkeypatch, x_shape, w_shape, kwargs):
    x, w, gy = _arrays(x_shape, w_shape, kwargs)
    want = _conv_and_grads(x, w, gy, kwargs)  # (CPU: the GEMM / C path)
    stand_in = StandInCudnn()
    with fake_cupy.installed() as cp:
        monkeypatch.setitem(conv_cudnn._found, id(cp), stand_in)
        got = _conv_and_grads(x, w, gy, kwargs)
    # (uneven padding: cuDNN takes one number per dimension, the GEMM path runs)
    expected = ["forward", "backward_data", "backward_filter"] if _even(kwargs) else []
    assert sorted(stand_in.calls) == sorted(expected)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)


def test_d2s_cudnn_0_keeps_the_gemm_path(monkeypatch):
    x_shape, w_shape, kwargs = CONFIGS[0]
    x, w, gy = _arrays(x_shape, w_shape, kwargs)
    stand_in = StandInCudnn()
    monkeypatch.setenv("D2S_CUDNN", "0")
    with fake_cupy.installed() as cp:
        monkeypatch.setitem(conv_cudnn._found, id(cp), stand_in)
        got = _conv_and_grads(x, w, gy, kwargs)
    assert stand_in.calls == []
    np.testing.assert_allclose(got[0], _conv_and_grads(x, w, gy, kwargs)[0], rtol=1e-12)


def test_tensor_core_modes_and_the_padding_cudnn_takes():
    assert conv_cudnn._tensor_core(np.dtype("float16")) == "auto"
    assert conv_cudnn._tensor_core(np.dtype("float32")) == "never"
    assert conv_cudnn._pairs(((1, 1), (2, 2))) == (1, 2)
    assert conv_cudnn._pairs(((1, 0), (2, 2))) is None


@pytest.mark.gpu
@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS, ids=IDS)
def test_real_cudnn_equals_the_cpu_path(x_shape, w_shape, kwargs):
    cp = pytest.importorskip("cupy")
    x, w, gy = _arrays(x_shape, w_shape, kwargs)
    want = _conv_and_grads(x, w, gy, kwargs)
    rt.set_device("gpu")
    try:
        assert conv_cudnn.cudnn_of(cp) is not None, "CuPy without cuDNN: the GEMM path ran"
        got = _conv_and_grads(x, w, gy, kwargs)
    finally:
        rt.set_device("cpu")
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9)


@pytest.mark.slow
def test_the_gpu_conv_benchmark_runs_on_the_cpu(capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import gpu_conv

    gpu_conv.main(["--device", "cpu", "--repeat", "1", "--number", "1"])
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| ")]
    assert len(rows) == 1 + 2 * len(gpu_conv.CASES)
    assert all(ln.endswith("| 0.0e+00 |") for ln in rows[1:])  # (both columns: the CPU path)
