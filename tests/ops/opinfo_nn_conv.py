"""OpInfos for convolution, pooling and resizing (runtime/ops/nn_conv.py, nn_pool.py), called
through `runtime.nn.functional`.

The references are independent of the kernels and plain: convolution shifts and adds one
kernel tap at a time (the kernels use im2col), the transpose scatters one tap at a time,
pooling and resizing loop over output pixels with Paddle's coordinate rules.
"""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime.nn.functional as F


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _pad4(padding, size, kernel, stride, dilation):
    if padding == "VALID":
        return [0, 0, 0, 0]
    if padding == "SAME":
        out = []
        for n, k, s, d in zip(size, kernel, stride, dilation):
            total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            out += [total // 2, total - total // 2]
        return out
    if isinstance(padding, int):
        return [padding] * 4
    return [padding[0], padding[0], padding[1], padding[1]] if len(padding) == 2 else padding


# ---- convolution ----------------------------------------------------------------------------

def _conv_ref(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Shift-and-add: for each kernel tap, a strided slice of the padded input times the tap."""
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    kh, kw = w.shape[2:]
    pt, pb, pl, pr = _pad4(padding, x.shape[2:], (kh, kw), (sh, sw), (dh, dw))
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    ho = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    wo = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], ho, wo))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + sh * (ho - 1) + 1:sh,
                           j * dw:j * dw + sw * (wo - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _conv_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 5, 5), randn(rng, 4, 3, 3, 3), randn(rng, 4))),
        Sample((randn(rng, 1, 2, 6, 5), randn(rng, 3, 2, 2, 3)),
               {"stride": 2, "padding": 1, "dilation": (1, 2)}),
        Sample((randn(rng, 1, 4, 5, 6), randn(rng, 4, 2, 3, 3)),
               {"groups": 2, "padding": [1, 0, 2, 1], "stride": (1, 2)}),
        Sample((randn(rng, 2, 3, 5, 5), randn(rng, 6, 1, 3, 3)), {"groups": 3, "padding": 1}),
        Sample((randn(rng, 1, 2, 5, 4), randn(rng, 2, 2, 3, 3)),
               {"padding": "SAME", "stride": 2}),
        Sample((randn(rng, 1, 2, 5, 4), randn(rng, 2, 2, 3, 2)), {"padding": "VALID"}),
    ]


_CONV_ERRORS = [
    ErrorSample((np.ones((1, 3, 5, 5)), np.ones((4, 2, 3, 3))), {}, ValueError,
                r"conv2d: x has shape \[1, 3, 5, 5\] \(3 channels\) but weight has shape "
                r"\[4, 2, 3, 3\]"),
    ErrorSample((np.ones((3, 5, 5)), np.ones((4, 3, 3, 3))), {}, ValueError,
                r"conv2d: x must be 4-D \[N, C, H, W\], got shape \[3, 5, 5\]"),
    ErrorSample((np.ones((1, 3, 2, 2)), np.ones((4, 3, 3, 3))), {}, ValueError,
                r"conv2d: the output would be empty: input spatial size \[2, 2\]"),
    ErrorSample((np.ones((1, 3, 5, 5), np.float32), np.ones((4, 3, 3, 3))), {}, TypeError,
                r"conv2d: x has dtype float32 but weight has dtype float64"),
]


def _conv_transpose_ref(x, w, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                        groups=1):
    """Scatter: each input pixel adds its value times every kernel tap into the output."""
    (sh, sw), (dh, dw), (oph, opw) = _pair(stride), _pair(dilation), _pair(output_padding)
    n, cin, h, wd = x.shape
    kh, kw = w.shape[2:]
    pt, pb, pl, pr = _pad4(padding, (h, wd), (kh, kw), (sh, sw), (dh, dw))
    full = np.zeros((n, w.shape[1] * groups, (h - 1) * sh + dh * (kh - 1) + 1 + oph,
                     (wd - 1) * sw + dw * (kw - 1) + 1 + opw))
    cg, og = cin // groups, w.shape[1]
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                full[:, g * og:(g + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh,
                     j * dw:j * dw + sw * (wd - 1) + 1:sw] += np.einsum(
                    "nchw,co->nohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, i, j])
    out = full[:, :, pt:full.shape[2] - pb, pl:full.shape[3] - pr]
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _conv_transpose_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 3, 4), randn(rng, 3, 2, 3, 3), randn(rng, 2))),
        Sample((randn(rng, 1, 2, 3, 3), randn(rng, 2, 3, 3, 2)),
               {"stride": 2, "padding": 1, "output_padding": 1}),
        Sample((randn(rng, 1, 4, 3, 3), randn(rng, 4, 1, 2, 2)),
               {"groups": 2, "stride": (2, 1), "dilation": 2}),
    ]


def _conv1d_ref(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    pad = [0, 0, padding, padding] if isinstance(padding, int) else padding
    out = _conv_ref(x[:, :, None], w[:, :, None], None, (1, stride), pad, (1, dilation), groups)
    out = out[:, :, 0]
    return out if bias is None else out + bias.reshape(1, -1, 1)


def _conv1d_samples(rng):
    return [Sample((randn(rng, 2, 3, 7), randn(rng, 4, 3, 3), randn(rng, 4)), {"padding": 1}),
            Sample((randn(rng, 1, 4, 8), randn(rng, 4, 2, 2)), {"stride": 2, "groups": 2})]


# ---- pooling and resizing -------------------------------------------------------------------

def _pool_ref(x, kernel_size, stride=None, padding=0, ceil_mode=False, kind="max",
              exclusive=True, return_mask=False):
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride if stride is not None else kernel_size)
    pt, pb, pl, pr = _pad4(padding, x.shape[2:], (kh, kw), (sh, sw), (1, 1))
    n, c, h, w = x.shape

    def size(length, k, s, p0, p1):
        span = length + p0 + p1 - k
        o = (-(-span // s) if ceil_mode else span // s) + 1
        return o - 1 if ceil_mode and (o - 1) * s >= length + p0 else o

    ho, wo = size(h, kh, sh, pt, pb), size(w, kw, sw, pl, pr)
    out, mask = np.zeros((n, c, ho, wo)), np.zeros((n, c, ho, wo), dtype=np.int64)
    for i in range(ho):
        for j in range(wo):
            r0, c0 = i * sh - pt, j * sw - pl
            r1, c1 = min(r0 + kh, h), min(c0 + kw, w)
            r0, c0 = max(r0, 0), max(c0, 0)
            win = x[:, :, r0:r1, c0:c1]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
                flat = win.reshape(n, c, -1).argmax(-1)
                mask[:, :, i, j] = (r0 + flat // win.shape[3]) * w + c0 + flat % win.shape[3]
            else:
                count = win.shape[2] * win.shape[3] if exclusive else kh * kw
                out[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return (out, mask) if return_mask else out


def _max_pool_samples(rng):
    return [Sample((randn(rng, 2, 3, 6, 6), 2)),
            Sample((randn(rng, 1, 2, 7, 6), 3), {"stride": 2, "padding": 1}),
            Sample((randn(rng, 1, 2, 7, 6), (3, 2)), {"stride": (2, 1), "return_mask": True}),
            Sample((randn(rng, 1, 2, 7, 7), 2), {"ceil_mode": True})]


def _avg_pool_samples(rng):
    return [Sample((randn(rng, 2, 3, 6, 6), 2)),
            Sample((randn(rng, 1, 2, 7, 6), 3), {"stride": 2, "padding": 1}),
            Sample((randn(rng, 1, 2, 7, 6), 3), {"stride": 2, "padding": 1, "exclusive": False}),
            Sample((randn(rng, 1, 2, 7, 7), 2), {"ceil_mode": True})]


def _adaptive_ref(x, output_size):
    oh, ow = _pair(output_size)
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            out[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    return out


def _adaptive_samples(rng):
    return [Sample((randn(rng, 2, 3, 6, 6), 1)), Sample((randn(rng, 1, 2, 7, 5), (3, 2))),
            Sample((randn(rng, 1, 2, 4, 4), 4))]


def _adaptive_max_ref(x, output_size, return_mask=False):
    oh, ow = _pair(output_size)
    n, c, h, w = x.shape
    out, mask = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow), dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            for a in range(n):
                for b in range(c):
                    win = x[a, b, r0:r1, c0:c1]
                    r, q = np.unravel_index(win.argmax(), win.shape)
                    out[a, b, i, j], mask[a, b, i, j] = win[r, q], (r0 + r) * w + c0 + q
    return (out, mask) if return_mask else out


def _pixel_shuffle_ref(x, r):
    n, c, h, w = x.shape
    out = np.zeros((n, c // (r * r), h * r, w * r))
    for k in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[:, k, i::r, j::r] = x[:, k * r * r + i * r + j]
    return out


def _interp_ref(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
                align_mode=0):
    """Per output pixel, Paddle's source coordinate rule."""
    h, w = x.shape[2:]
    if size is not None:
        oh, ow = _pair(size)
    else:
        oh, ow = int(h * scale_factor), int(w * scale_factor)

    def ratio(n, o):
        if align_corners:
            return (n - 1) / (o - 1) if o > 1 else 0.0
        return 1 / scale_factor if scale_factor else n / o

    rh, rw = ratio(h, oh), ratio(w, ow)
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            if mode == "nearest":
                si = min(int(rh * i + 0.5) if align_corners else int(rh * i), h - 1)
                sj = min(int(rw * j + 0.5) if align_corners else int(rw * j), w - 1)
                out[:, :, i, j] = x[:, :, si, sj]
                continue
            half = align_mode == 0 and not align_corners
            fi = max(rh * (i + 0.5) - 0.5, 0) if half else rh * i
            fj = max(rw * (j + 0.5) - 0.5, 0) if half else rw * j
            i0, j0 = min(int(fi), h - 1), min(int(fj), w - 1)
            i1, j1 = min(i0 + 1, h - 1), min(j0 + 1, w - 1)
            di, dj = fi - i0, fj - j0
            out[:, :, i, j] = ((1 - di) * (1 - dj) * x[:, :, i0, j0] + (1 - di) * dj
                               * x[:, :, i0, j1] + di * (1 - dj) * x[:, :, i1, j0]
                               + di * dj * x[:, :, i1, j1])
    return out


def _interp_samples(rng):
    return [Sample((randn(rng, 1, 2, 3, 4),), {"scale_factor": 2}),
            Sample((randn(rng, 1, 2, 4, 5),), {"size": (3, 7), "align_corners": True}),
            Sample((randn(rng, 1, 2, 3, 4),), {"size": (5, 6), "mode": "bilinear"}),
            Sample((randn(rng, 1, 2, 3, 4),), {"size": (5, 7), "mode": "bilinear",
                                                "align_corners": True}),
            Sample((randn(rng, 1, 2, 4, 3),), {"scale_factor": 1.5, "mode": "bilinear",
                                                "align_mode": 1}),
            Sample((randn(rng, 1, 1, 5, 6),), {"size": (2, 3), "mode": "bilinear"})]


OPINFOS = [
    OpInfo("conv2d", F.conv2d, _conv_ref, _conv_samples, error_samples=_CONV_ERRORS,
           covers=("conv2d_grad_input", "conv2d_grad_filter")),
    OpInfo("conv2d_transpose", F.conv2d_transpose, _conv_transpose_ref,
           _conv_transpose_samples, error_samples=[
               ErrorSample((np.ones((1, 3, 4, 4)), np.ones((2, 3, 3, 3))), {}, ValueError,
                           r"conv2d_transpose: x has shape \[1, 3, 4, 4\] \(3 channels\) but "
                           r"weight has shape \[2, 3, 3, 3\]")]),
    OpInfo("conv1d", F.conv1d, _conv1d_ref, _conv1d_samples),
    OpInfo("max_pool2d", F.max_pool2d,
           lambda x, k, **kw: _pool_ref(x, k, kind="max", **kw), _max_pool_samples,
           covers=("max_pool2d_grad", "max_pool2d_pick"), error_samples=[
               ErrorSample((np.ones((1, 1, 2, 2)), 3), {}, ValueError,
                           r"max_pool2d: kernel \[3, 3\] does not fit into x of shape "
                           r"\[1, 1, 2, 2\]"),
               ErrorSample((np.ones((1, 1, 4, 4)), 2), {"padding": 2}, ValueError,
                           r"max_pool2d: padding \[2, 2, 2, 2\] must be at most half the "
                           r"kernel size \[2, 2\]")]),
    OpInfo("avg_pool2d", F.avg_pool2d, lambda x, k, **kw: _pool_ref(x, k, kind="avg", **kw),
           _avg_pool_samples, covers=("avg_pool2d_grad",)),
    OpInfo("resize2d", F.adaptive_avg_pool2d, _adaptive_ref, _adaptive_samples,
           covers=("resize2d_grad",), error_samples=[
               ErrorSample((np.ones((1, 2, 2)), 3), {}, ValueError,
                           r"adaptive_avg_pool2d: x must be 4-D \[N, C, H, W\], got shape "
                           r"\[1, 2, 2\]"),
               ErrorSample((np.ones((1, 1, 4, 4)), [2, 2, 2]), {}, ValueError,
                           r"adaptive_avg_pool2d: output_size must be an int or 2 values, "
                           r"got \[2, 2, 2\]")]),
    OpInfo("adaptive_max_pool2d", F.adaptive_max_pool2d, _adaptive_max_ref,
           lambda rng: [Sample((randn(rng, 2, 3, 6, 6), 2)),
                        Sample((randn(rng, 1, 2, 5, 7), (2, 3)), {"return_mask": True})],
           error_samples=[
               ErrorSample((np.ones((1, 1, 4, 4)), [2, 2, 2]), {}, ValueError,
                           r"adaptive_max_pool2d: output_size must be an int or 2 values, "
                           r"got \[2, 2, 2\]")]),
    OpInfo("pixel_shuffle", F.pixel_shuffle, _pixel_shuffle_ref,
           lambda rng: [Sample((randn(rng, 2, 8, 2, 3), 2)), Sample((randn(rng, 1, 9, 2, 2), 3))]),
    OpInfo("interpolate", F.interpolate, _interp_ref, _interp_samples, error_samples=[
        ErrorSample((np.ones((1, 1, 2, 2)),), {"size": 3, "mode": "bicubic"}, ValueError,
                    r"interpolate: mode must be 'nearest' or 'bilinear', got 'bicubic'")]),
    OpInfo("max_pool1d", F.max_pool1d,
           lambda x, k, stride=None, padding=0: _pool_ref(
               x[:, :, None], (1, k), (1, stride or k), [0, 0, padding, padding],
               kind="max")[:, :, 0],
           lambda rng: [Sample((randn(rng, 2, 3, 7), 2)),
                        Sample((randn(rng, 1, 2, 8), 3), {"stride": 2, "padding": 1})]),
    OpInfo("avg_pool1d", F.avg_pool1d,
           lambda x, k, stride=None, padding=0: _pool_ref(
               x[:, :, None], (1, k), (1, stride or k), [0, 0, padding, padding],
               kind="avg")[:, :, 0],
           lambda rng: [Sample((randn(rng, 2, 3, 7), 2)),
                        Sample((randn(rng, 1, 2, 8), 3), {"stride": 2, "padding": 1})]),
    OpInfo("adaptive_avg_pool1d", F.adaptive_avg_pool1d,
           lambda x, n: _adaptive_ref(x[:, :, None], (1, n))[:, :, 0],
           lambda rng: [Sample((randn(rng, 2, 3, 7), 3)), Sample((randn(rng, 1, 2, 5), 1))]),
]
