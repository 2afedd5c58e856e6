"""Depthwise 2-D convolution in generated C (groups == channels, one input channel per group,
any channel multiplier, stride, dilation and non-negative padding): the forward, the input
gradient and the weight gradient of float32 NumPy convolutions, installed in
`runtime/ops/nn_conv.py`'s `NATIVE_KERNELS` beside `conv_native.py`'s kernels.

Why C: NumPy's depthwise path (`nn_conv._depthwise_forward`) is a loop over the kernel's taps
with one broadcast multiply-add over the whole batch each, and its weight gradient an einsum
per tap; on MobileNet's small planes (16 x 16 and below) that is nine passes over memory
per call where the C code keeps a row in L1. Each output row accumulates in a local row
`acc[WO]`, one tap at a time (`acc[x] += w * in[x * SW]`: the compiler vectorises it, also at
stride 2); the input gradient scatters each output row back through the taps into a padded
plane and crops it; the weight gradient sums g * x rows per tap the same way and adds each
row's sum. Sizes are `#define`s, as in `conv_native.py`, and the same rules hold: images
split over the d2s threads, a geometry compiled before its first call (with the others its
program planned: `conv_kernels.py`), results equal to the NumPy path's to float rounding
(tests/ops/test_conv_native.py).
"""
from __future__ import annotations

import functools

import numpy as np

from ..ops import nn_conv
from . import conv_kernels

_PRELUDE = """/* channel plane x [H][W] into xp [HP][WP], zero borders (xp was zeroed once) */
#define pad_plane D2S_CAT(NAME, _pad)
static void pad_plane(const float *x, float *xp) {
  for (int y = 0; y < H; y++)
    memcpy(xp + (int64_t)(y + PT) * WP + PL, x + (int64_t)y * W, sizeof(float) * W);
}
"""

_FORWARD = """
/* out[n][c*M + m][y][x] = sum over i, j of w[c*M + m][0][i][j] * xp[n][c][y*SH + i*DH][x*SW + j*DW] */
CONTRACT int NAME(void **p, int64_t lo, int64_t hi) {
  const float *x = p[0], *w = p[1];
  float *out = p[2];
  float *xp = calloc((size_t)HP * WP, sizeof(float));
  if (!xp) return -1;
  for (int64_t n = lo; n < hi; n++)
    for (int c = 0; c < C; c++) {
      pad_plane(x + (n * C + c) * H * W, xp);
      for (int m = 0; m < M; m++) {
        const float *wk = w + (int64_t)(c * M + m) * KH * KW;
        float *o = out + ((n * C + c) * M + m) * HO * WO;
        for (int y = 0; y < HO; y++) {
          float acc[WO] = {0};
          for (int i = 0; i < KH; i++)
            for (int j = 0; j < KW; j++) {
              const float wv = wk[i * KW + j];
              const float *restrict in = xp + (int64_t)(y * SH + i * DH) * WP + j * DW;
              for (int q = 0; q < WO; q++) acc[q] += wv * in[q * SW];
            }
          memcpy(o + (int64_t)y * WO, acc, sizeof acc);
        }
      }
    }
  free(xp);
  return 0;
}
#undef pad_plane
"""

_GRAD_INPUT = """
/* gx[n][c][yy][xx]: each output gradient row scattered back through the taps into a padded
   plane, then cropped */
CONTRACT int NAME(void **p, int64_t lo, int64_t hi) {
  const float *g = p[0], *w = p[1];
  float *gx = p[2];
  float *gp = malloc(sizeof(float) * HP * WP);
  if (!gp) return -1;
  for (int64_t n = lo; n < hi; n++)
    for (int c = 0; c < C; c++) {
      memset(gp, 0, sizeof(float) * HP * WP);
      for (int m = 0; m < M; m++) {
        const float *wk = w + (int64_t)(c * M + m) * KH * KW;
        const float *gm = g + ((n * C + c) * M + m) * HO * WO;
        for (int y = 0; y < HO; y++)
          for (int i = 0; i < KH; i++)
            for (int j = 0; j < KW; j++) {
              const float wv = wk[i * KW + j];
              const float *restrict grow = gm + (int64_t)y * WO;
              float *restrict dst = gp + (int64_t)(y * SH + i * DH) * WP + j * DW;
              for (int q = 0; q < WO; q++) dst[q * SW] += wv * grow[q];
            }
      }
      for (int yy = 0; yy < H; yy++)
        memcpy(gx + ((n * C + c) * H + yy) * W, gp + (int64_t)(yy + PT) * WP + PL,
               sizeof(float) * W);
    }
  free(gp);
  return 0;
}
#undef pad_plane
"""

_GRAD_FILTER = """
/* dw[c*M + m][0][i][j] = sum over n, y, x of g[n][c*M + m][y][x] * xp[n][c][y*SH + i*DH][x*SW + j*DW]
   (this piece's images) */
CONTRACT int NAME(void **p, int64_t lo, int64_t hi) {
  const float *x = p[0], *g = p[1];
  float *dw = p[2];
  float *xp = calloc((size_t)HP * WP, sizeof(float));
  if (!xp) return -1;
  memset(dw, 0, sizeof(float) * C * M * KH * KW);
  for (int64_t n = lo; n < hi; n++)
    for (int c = 0; c < C; c++) {
      pad_plane(x + (n * C + c) * H * W, xp);
      for (int m = 0; m < M; m++) {
        const float *gm = g + ((n * C + c) * M + m) * HO * WO;
        for (int i = 0; i < KH; i++)
          for (int j = 0; j < KW; j++) {
            float acc[WO] = {0};
            for (int y = 0; y < HO; y++) {
              const float *restrict grow = gm + (int64_t)y * WO;
              const float *restrict in = xp + (int64_t)(y * SH + i * DH) * WP + j * DW;
              for (int q = 0; q < WO; q++) acc[q] += grow[q] * in[q * SW];
            }
            float s = 0;
            for (int q = 0; q < WO; q++) s += acc[q];
            dw[((int64_t)(c * M + m) * KH + i) * KW + j] += s;
          }
      }
    }
  free(xp);
  return 0;
}
#undef pad_plane
"""

_BODIES = {"forward": _FORWARD, "grad_input": _GRAD_INPUT, "grad_filter": _GRAD_FILTER}


def source(kind: str, defines: dict) -> str:
    """The C of `kind` ("forward", "grad_input" or "grad_filter") for one geometry."""
    return conv_kernels.assemble(f"depthwise_{kind}", defines, _PRELUDE + _BODIES[kind])


_SOURCES = {kind: functools.partial(source, kind) for kind in _BODIES}


def _defines(x_shape, w_shape, stride, pads, dilation) -> dict:
    _, c, h, w = x_shape
    kh, kw = w_shape[2:]
    (pt, pb), (pl, pr) = pads
    (sh, sw), (dh, dw) = stride, dilation
    hp, wp = h + pt + pb, w + pl + pr
    return {"C": c, "M": w_shape[0] // c, "H": h, "W": w, "KH": kh, "KW": kw, "SH": sh,
            "SW": sw, "DH": dh, "DW": dw, "PT": pt, "PL": pl, "HP": hp, "WP": wp,
            "HO": (hp - dh * (kh - 1) - 1) // sh + 1, "WO": (wp - dw * (kw - 1) - 1) // sw + 1}


def _applies(xp, arrays, x_shape, w_shape, pads, groups) -> bool:
    """Float32 NumPy depthwise convolutions with non-negative padding."""
    return (xp is np and all(a.dtype == np.float32 and 0 not in a.shape for a in arrays)
            and groups == x_shape[1] and w_shape[1] == 1 and min(min(p) for p in pads) >= 0)


def _kernel(kind, arrays, x_shape, w_shape, stride, pads, dilation, groups, xp, planning):
    """(defines, the ready C function) of `kind` for this geometry, or None where it does
    not apply or is not ready; only planned (`conv_kernels.plan`) if `planning`."""
    if not _applies(xp, arrays, x_shape, w_shape, pads, groups):
        return None
    defines = _defines(x_shape, w_shape, stride, pads, dilation)
    if planning:
        conv_kernels.plan(f"depthwise_{kind}", defines, _SOURCES[kind])
        return None
    fn = conv_kernels.ready_kernel(f"depthwise_{kind}", defines, _SOURCES[kind])
    return None if fn is None else (defines, fn)


def depthwise_conv2d(xp, x, w, stride, pads, dilation, groups, planning=False):
    """The forward in C, or None where it does not apply or is not ready (or `planning`:
    the arrays are `Meta`s of a traced program)."""
    ready = _kernel("forward", (x, w), x.shape, w.shape, stride, pads, dilation, groups, xp,
                    planning)
    if ready is None:
        return None
    defines, fn = ready
    out = np.empty((x.shape[0], w.shape[0], defines["HO"], defines["WO"]), np.float32)
    work = conv_kernels.macs(out, w.shape)
    return None if conv_kernels.over_images(fn, (x, w), lambda lo, hi: out, work) is None \
        else out


def depthwise_grad_input(xp, g, w, x_shape, stride, pads, dilation, groups, planning=False):
    """The input gradient in C, or None where it does not apply or is not ready."""
    ready = _kernel("grad_input", (g, w), x_shape, w.shape, stride, pads, dilation, groups,
                    xp, planning)
    if ready is None:
        return None
    gx = np.empty(x_shape, np.float32)
    work = conv_kernels.macs(g, w.shape)
    return None if conv_kernels.over_images(ready[1], (g, w), lambda lo, hi: gx, work) is None \
        else gx


def depthwise_grad_filter(xp, x, g, w_shape, stride, pads, dilation, groups, planning=False):
    """The weight gradient in C, or None where it does not apply or is not ready."""
    ready = _kernel("grad_filter", (x, g), x.shape, w_shape, stride, pads, dilation, groups,
                    xp, planning)
    if ready is None:
        return None
    # each piece sums its own images into its own buffer; the buffers are added here
    parts = conv_kernels.over_images(ready[1], (x, g),
                                     lambda lo, hi: np.empty(w_shape, np.float32),
                                     conv_kernels.macs(g, w_shape))
    return None if parts is None else functools.reduce(np.add, parts)


_KERNELS = {"depthwise_conv2d": depthwise_conv2d, "depthwise_grad_input": depthwise_grad_input,
            "depthwise_grad_filter": depthwise_grad_filter}
nn_conv.NATIVE_KERNELS.update(_KERNELS)
nn_conv.NATIVE_PLANS.update({name: functools.partial(fn, planning=True)
                             for name, fn in _KERNELS.items()})
