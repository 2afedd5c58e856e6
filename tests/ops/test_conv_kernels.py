"""The conv2d kernels (runtime/ops/nn_conv.py) on every path they choose between: im2col + GEMM
forward; the input gradient as a flipped-kernel convolution (stride 1 whose padding fits the
dilated kernel) or as GEMM + col2im (strides, over-wide padding); depthwise tap loops; groups.

Values are checked against a per-output-pixel NumPy reference, gradients against central
differences of that reference, eagerly and through `d2s.to_static`.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
import runtime.nn.functional as F

# (x shape, weight shape, conv2d keywords); padding as [top, bottom, left, right]
CONFIGS = [
    ((2, 4, 6, 6), (4, 4, 3, 3), {"padding": [1, 1, 1, 1]}),  # the ResNet block's conv
    ((1, 4, 6, 5), (6, 2, 3, 3), {"padding": [1, 0, 2, 1], "groups": 2}),
    ((1, 3, 7, 7), (2, 3, 3, 2), {"padding": [2, 2, 1, 1], "dilation": (2, 1)}),
    ((1, 2, 5, 5), (3, 2, 2, 2), {"padding": [2, 1, 0, 2]}),  # wider than the kernel: col2im
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": [1, 1, 1, 1], "stride": 2}),
    ((1, 2, 6, 7), (2, 2, 3, 2), {"padding": [0, 1, 1, 0], "stride": (2, 3),
                                  "dilation": (1, 2)}),
    ((1, 4, 6, 6), (4, 2, 1, 1), {"padding": [0, 0, 0, 0], "groups": 2}),
    ((2, 3, 5, 5), (6, 1, 3, 3), {"padding": [1, 1, 1, 1], "groups": 3}),  # depthwise
]
IDS = ["block", "groups", "dilation", "wide-padding", "stride2", "mixed", "1x1", "depthwise"]


def conv_reference(x, w, stride=1, padding=(0, 0, 0, 0), dilation=1, groups=1):
    """Each output pixel as the sum over its window, one window at a time."""
    (sh, sw), (dh, dw) = (np.broadcast_to(v, 2) for v in (stride, dilation))
    pt, pb, pl, pr = padding
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    kh, kw = w.shape[2:]
    ho = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    wo = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], ho, wo), dtype=x.dtype)
    for g in range(groups):
        wg = w[g * og:(g + 1) * og]
        for i in range(ho):
            for j in range(wo):
                win = xp[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                         j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, g * og:(g + 1) * og, i, j] = np.einsum("nckl,ockl->no", win, wg)
    return out


def conv_and_grads(x, w, r, kwargs):
    """The output and the gradients of (output * r).sum() in x and w."""
    y = F.conv2d(x, w, **kwargs)
    dx, dw = rt.grad([(y * r).sum()], [x, w])
    return y, dx, dw


def _inputs(x_shape, w_shape, kwargs, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    r = rng.standard_normal(conv_reference(x, w, **kwargs).shape)
    return [a.astype(dtype) for a in (x, w, r)]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS, ids=IDS)
def test_values_and_gradients_eager_and_static(x_shape, w_shape, kwargs):
    x, w, r = _inputs(x_shape, w_shape, kwargs)
    want_y = conv_reference(x, w, **kwargs)
    want_dx = numeric_grad(lambda a: (conv_reference(a, w, **kwargs) * r).sum(), x, 1e-4)
    want_dw = numeric_grad(lambda a: (conv_reference(x, a, **kwargs) * r).sum(), w, 1e-4)
    static = d2s.to_static(conv_and_grads)
    for fn in (conv_and_grads, static):
        xt, wt = (rt.to_tensor(a, stop_gradient=False) for a in (x, w))
        got = fn(xt, wt, rt.to_tensor(r), kwargs)
        assert len(got) == 3
        for name, g, want in zip(("y", "dx", "dw"), got, (want_y, want_dx, want_dw)):
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONFIGS, ids=IDS)
def test_float32_gradients_are_the_adjoints_of_the_forward(x_shape, w_shape, kwargs):
    """<conv(x, w), r> == <x, dx> == <w, dw>, and the float32 kernels match the reference."""
    x, w, r = _inputs(x_shape, w_shape, kwargs, dtype="float32", seed=1)
    xt, wt = (rt.to_tensor(a, stop_gradient=False) for a in (x, w))
    y, dx, dw = conv_and_grads(xt, wt, rt.to_tensor(r), kwargs)
    assert y.dtype == dx.dtype == dw.dtype == rt.float32
    np.testing.assert_allclose(y.numpy(), conv_reference(x, w, **kwargs), rtol=1e-5, atol=1e-5)
    pairing = float((conv_reference(x.astype("float64"), w.astype("float64"), **kwargs)
                     * r).sum())
    np.testing.assert_allclose(float((x * dx.numpy()).sum()), pairing, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float((w * dw.numpy()).sum()), pairing, rtol=1e-4, atol=1e-4)


def block_step(x, w):
    """A tensor `if` between a stride-1 and a stride-2 conv: one program, both adjoints."""
    if x.mean() > 0:
        y = F.conv2d(x, w, padding=1)
    else:
        y = F.conv2d(x, w, padding=1, stride=2)
    loss = (y * y).mean()
    dx, dw = rt.grad([loss], [x, w])
    return loss, dx, dw


def test_one_converted_program_takes_both_input_gradient_paths():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 3, 3, 3))
    static = d2s.to_static(block_step)
    for sign, stride in ((1.0, 1), (-1.0, 2)):
        x = np.abs(rng.standard_normal((2, 3, 6, 6))) * sign

        def loss(a, b, stride=stride):
            y = conv_reference(a, b, stride=stride, padding=(1, 1, 1, 1))
            return (y * y).mean()

        want = (loss(x, w), numeric_grad(lambda a: loss(a, w), x, 1e-5),
                numeric_grad(lambda b, x=x: loss(x, b), w, 1e-5))
        for fn in (block_step, static):
            got = fn(*(rt.to_tensor(a, stop_gradient=False) for a in (x, w)))
            assert len(got) == len(want)
            for g, v in zip(got, want):
                np.testing.assert_allclose(g.numpy(), v, rtol=1e-6, atol=1e-8)


def transposed(x, w):
    return F.conv2d_transpose(x, w, padding=[0, -1])


def forward(x, w):
    return F.conv2d(x, w, padding=-1)


@pytest.mark.parametrize("fn, op", [(forward, "conv2d"), (transposed, "conv2d_transpose")])
def test_negative_padding_is_an_error_eager_and_static(fn, op):
    x, w = rt.ones([1, 2, 5, 5]), rt.ones([2, 2, 3, 3])
    for f in (fn, d2s.to_static(fn)):
        with pytest.raises(ValueError, match=rf"{op}: padding must not be negative, got \["):
            f(x, w)
