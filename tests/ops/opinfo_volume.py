"""OpInfos for 3-D convolution and pooling (runtime/nn/functional/volume.py, composites of the
2-D ops), against direct loops over every output position."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime.nn.functional as F


def _pads(padding):
    if isinstance(padding, int):
        return [(padding, padding)] * 3
    if len(padding) == 3:
        return [(p, p) for p in padding]
    return [(padding[0], padding[1]), (padding[2], padding[3]), (padding[4], padding[5])]


def _conv3d_ref(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    s = [stride] * 3 if isinstance(stride, int) else stride
    d = [dilation] * 3 if isinstance(dilation, int) else dilation
    xp = np.pad(x, [(0, 0), (0, 0)] + _pads(padding))
    n, c = x.shape[:2]
    o, cg, *k = w.shape
    out_sz = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(3)]
    out = np.zeros((n, o, *out_sz), dtype=x.dtype)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for z, y, xx in np.ndindex(*out_sz):
            patch = xp[:, g * cg:(g + 1) * cg,
                       z * s[0]: z * s[0] + d[0] * (k[0] - 1) + 1: d[0],
                       y * s[1]: y * s[1] + d[1] * (k[1] - 1) + 1: d[1],
                       xx * s[2]: xx * s[2] + d[2] * (k[2] - 1) + 1: d[2]]
            out[:, oc, z, y, xx] = np.sum(patch * w[oc], axis=(1, 2, 3, 4))
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out


def _pool3d_ref(kind):
    def ref(x, kernel_size, stride=None, padding=0, exclusive=True):
        k = [kernel_size] * 3 if isinstance(kernel_size, int) else kernel_size
        s = k if stride is None else ([stride] * 3 if isinstance(stride, int) else stride)
        pads = _pads(padding)
        fill = -np.inf if kind == "max" else 0.0
        xp = np.pad(x, [(0, 0), (0, 0)] + pads, constant_values=fill)
        valid = np.pad(np.ones(x.shape[2:]), pads)
        out_sz = [(xp.shape[2 + i] - k[i]) // s[i] + 1 for i in range(3)]
        out = np.zeros(x.shape[:2] + tuple(out_sz), dtype=x.dtype)
        for z, y, xx in np.ndindex(*out_sz):
            sl = (slice(z * s[0], z * s[0] + k[0]), slice(y * s[1], y * s[1] + k[1]),
                  slice(xx * s[2], xx * s[2] + k[2]))
            win = xp[(slice(None), slice(None)) + sl]
            if kind == "max":
                out[:, :, z, y, xx] = win.max(axis=(2, 3, 4))
            else:
                count = valid[sl].sum() if exclusive else np.prod(k)
                out[:, :, z, y, xx] = win.sum(axis=(2, 3, 4)) / count
        return out
    return ref


def _conv3d_samples(rng):
    return [Sample((randn(rng, 1, 2, 3, 4, 4), randn(rng, 3, 2, 2, 2, 2))),
            Sample((randn(rng, 2, 2, 4, 3, 3), randn(rng, 2, 2, 2, 2, 2), randn(rng, 2)),
                   {"stride": [2, 1, 1], "padding": 1}),
            Sample((randn(rng, 1, 4, 3, 3, 3), randn(rng, 2, 2, 3, 1, 2)),
                   {"padding": [1, 0, 1], "groups": 2, "dilation": [1, 1, 2]})]


def _pool_samples(rng):
    # distinct values so that maxima have no ties (finite differences stay smooth)
    def distinct(*shape):
        return rng.permutation(int(np.prod(shape))).reshape(shape) / 10.0
    return [Sample((distinct(1, 2, 4, 4, 4), 2)),
            Sample((distinct(2, 1, 3, 5, 4), [2, 3, 2]), {"stride": 1, "padding": 1}),
            Sample((distinct(1, 1, 5, 3, 3), 3), {"stride": 2, "padding": [1, 1, 0]})]


def _avg_samples(rng):
    return _pool_samples(rng) + [
        Sample((randn(rng, 1, 2, 3, 3, 3), 2), {"padding": 1, "exclusive": False})]


OPINFOS = [
    OpInfo("conv3d", F.conv3d, _conv3d_ref, _conv3d_samples,
           rtol={"float32": 1e-4, "float64": 1e-10}, atol={"float32": 1e-4, "float64": 1e-10},
           error_samples=[ErrorSample((np.ones((1, 2, 3, 3)), np.ones((1, 2, 1, 1, 1))), {},
                                      ValueError, r"conv3d: x must be 5-D \[N, C, D, H, W\]")]),
    OpInfo("max_pool3d", F.max_pool3d, _pool3d_ref("max"), _pool_samples,
           error_samples=[ErrorSample((np.ones((1, 1, 2, 2, 2)), 3), {}, ValueError,
                                      r"max_pool3d: the output depth would be 0")]),
    OpInfo("avg_pool3d", F.avg_pool3d, _pool3d_ref("avg"), _avg_samples),
]
