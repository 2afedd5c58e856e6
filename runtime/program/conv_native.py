"""Direct 2-D convolution in generated C: the forward, the weight gradient and the input
gradient of a float32 convolution (any stride, kernel size but 1 x 1, dilation, padding,
groups but depthwise: `conv_depthwise_native.py`), compiled through `native_build`
(`conv_kernels.py`) and installed in `runtime/ops/nn_conv.py`'s `NATIVE_KERNELS` (ops may not
import the program package: the rank rule of tests/test_layering.py). The input gradient of
a stride-1 convolution is a convolution of the output gradient with the flipped kernel, so it
runs on the forward's kernel; at larger strides (and where the padding is wider than the
dilated kernel) it has its own kernel instead of NumPy's GEMM + col2im, which also runs
`conv2d_transpose`.

Why direct C and not im2col + GEMM: the ResNet basic block's 16-channel GEMMs are too thin
for BLAS (docs/performance.md, "Convolution kernels"). Each source is specialised to one
geometry (sizes are `#define`s, so loops have constant bounds) and register-blocked with
GCC/Clang vector extensions (8 floats; lowered to AVX, SSE or NEON, whichever the target has):

- forward: 4 output channels x 16 output pixels of one row accumulate in 8 vector registers;
  each tap loads 2 input vectors and broadcasts 4 weights (prepacked tap-major, 4 at a time);
- weight gradient: for one (output-channel block, input channel, kernel row), 4 x KW vector
  accumulators sum g[o, y, x] * x_padded[c, y*sh + i*dh, x*sw + j*dw] over images, rows and
  8-pixel chunks; one horizontal sum per weight at the end;
- input gradient: for one (block of 4 input channels, tap, output row, 16 output pixels), 8
  vector accumulators sum w[o, c, i, j] * g[o, y, x] over the output channels, then are added
  where the forward read that tap's pixels (the phase planes below), cropped at the end:
  0.35x to 0.5x the time of GEMM + col2im (`benchmarks/conv_grad_input.py`,
  docs/performance.md).

Each image is padded into a zeroed scratch copy split into stride x stride phase planes
(`pad_image`), so that at any stride a tap's 8 pixels are 8 consecutive floats of one plane;
rows are rounded up so vector loads never leave it, and output rows are computed in whole
vectors and stored cropped. Images are split over the d2s threads (`native_pool.py`; each piece
of the weight gradient sums into its own buffer). Summation order differs from the GEMM's, so
results agree with the NumPy path to float rounding, not bit for bit
(tests/ops/test_conv_native.py). So that every call gives the same bits, in this process
and in any other with the same `D2S_NATIVE` setting, a geometry whose C code is not in the
cache is compiled before its first call (together with the other geometries its program
planned: `conv_kernels.py`), as a fused run with inexact math is (`native_build`).
`D2S_NATIVE=0` turns it off.
"""
from __future__ import annotations

import functools

import numpy as np

from ..ops import nn_conv
from . import conv_kernels

VECTOR = 8  # floats per vector
OUT_BLOCK, PIXEL_VECTORS = 4, 2  # forward: output channels x vectors of one row per block

_PRELUDE = """/* x [N][C][H][W] into xp [C][SH][SW][HPS][WPA], zero borders (xp was zeroed once): the
   padded image split into SH x SW phase planes, plane (py, px) holding padded rows py,
   py + SH, ... and columns px, px + SW, ..., so a tap of a strided convolution reads
   consecutive floats of one plane (at stride 1 there is one plane, the padded image) */
#define pad_image D2S_CAT(NAME, _pad)
static void pad_image(const float *x, float *xp) {
  for (int c = 0; c < C; c++)
    for (int y = 0; y < H; y++) {
      const float *src = x + ((int64_t)c * H + y) * W;
      int yp = y + PT;
      float *rows = xp + ((int64_t)(c * SH + yp % SH) * SW * HPS + yp / SH) * WPA;
      if (SW == 1) {
        memcpy(rows + PL, src, sizeof(float) * W);
        continue;
      }
      for (int i = 0; i < W; i++)
        rows[(int64_t)(i + PL) % SW * HPS * WPA + (i + PL) / SW] = src[i];
    }
}
/* the first float of plane row `y` (of the output's rows) for tap (i, j) of channel c */
#define TAP(c, y, i, j) (xp + ((((int64_t)(c) * SH + (i) * DH % SH) * SW + (j) * DW % SW) \
                               * HPS + (y) + (i) * DH / SH) * WPA + (j) * DW / SW)
"""

_FORWARD = """
/* out[n][g*OG + o][y][x] = sum over c < CG, i, j of
   w[g*OG + o][c][i][j] * xp[g*CG + c][y + i*DH][x + j*DW] */
CONTRACT int NAME(void **p, int64_t lo, int64_t hi) {
  const float *x = p[0], *w = p[1];
  float *out = p[2];
  float *xp = calloc((size_t)C * SH * SW * HPS * WPA, sizeof(float));
  float *wk = calloc((size_t)G * OBLK * CG * KH * KW * OB, sizeof(float));
  if (!xp || !wk) { free(xp); free(wk); return -1; }
  for (int o = 0; o < G * OG; o++)  /* [g][o block][c][tap][o in block] */
    for (int c = 0; c < CG; c++)
      for (int t = 0; t < KH * KW; t++)
        wk[((((int64_t)(o / OG) * OBLK + o % OG / OB) * CG + c) * KH * KW + t) * OB
           + o % OG % OB] = w[((int64_t)o * CG + c) * KH * KW + t];
  for (int64_t n = lo; n < hi; n++) {
    pad_image(x + n * C * H * W, xp);
    for (int g = 0; g < G; g++)
      for (int ob = 0; ob < OBLK; ob++) {
        const float *wb = wk + ((int64_t)g * OBLK + ob) * CG * KH * KW * OB;
        float *on = out + (n * G * OG + (int64_t)g * OG + ob * OB) * HO * WO;
        for (int y = 0; y < HO; y++)
          for (int x0 = 0; x0 < WO; x0 += NV * 8) {
            v8 acc[OB][NV];
            for (int b = 0; b < OB; b++)
              for (int v = 0; v < NV; v++) acc[b][v] = (v8){0};
            const float *wt = wb;
            for (int c = 0; c < CG; c++)
              for (int i = 0; i < KH; i++) {
                for (int j = 0; j < KW; j++, wt += OB) {
                  const float *row = TAP(g * CG + c, y, i, j) + x0;
                  v8 in[NV];
                  for (int v = 0; v < NV; v++) in[v] = load(row + 8 * v);
                  for (int b = 0; b < OB; b++)
                    for (int v = 0; v < NV; v++) acc[b][v] += wt[b] * in[v];
                }
              }
            int nx = WO - x0 < NV * 8 ? WO - x0 : NV * 8;
            for (int b = 0; b < OB && ob * OB + b < OG; b++)
              memcpy(on + ((int64_t)b * HO + y) * WO + x0, acc[b], sizeof(float) * nx);
          }
      }
  }
  free(xp);
  free(wk);
  return 0;
}
#undef pad_image
#undef TAP
"""

_GRAD_FILTER = """
/* dw[g*OG + o][c][i][j] = sum over n, y, x of
   gout[n][g*OG + o][y][x] * xp[n][g*CG + c][y + i*DH][x + j*DW] */
CONTRACT int NAME(void **p, int64_t lo, int64_t hi) {
  const float *x = p[0], *gout = p[1];
  float *dw = p[2];
  float *xp = calloc((size_t)C * SH * SW * HPS * WPA, sizeof(float));
  /* gout of one image, [g][o rounded up to OB][y][WOV]: zero past WO and past OG */
  float *gp = calloc((size_t)G * OBLK * OB * HO * WOV, sizeof(float));
  if (!xp || !gp) { free(xp); free(gp); return -1; }
  memset(dw, 0, sizeof(float) * G * OG * CG * KH * KW);
  for (int64_t n = lo; n < hi; n++) {
    pad_image(x + n * C * H * W, xp);
    for (int o = 0; o < G * OG; o++)
      for (int y = 0; y < HO; y++)
        memcpy(gp + (((int64_t)(o / OG) * OBLK * OB + o % OG) * HO + y) * WOV,
               gout + ((n * G * OG + o) * HO + y) * WO, sizeof(float) * WO);
    for (int g = 0; g < G; g++)
      for (int ob = 0; ob < OBLK; ob++)
        for (int c = 0; c < CG; c++)
          for (int i = 0; i < KH; i++) {
            v8 acc[OB][KW];
            for (int b = 0; b < OB; b++)
              for (int j = 0; j < KW; j++) acc[b][j] = (v8){0};
            for (int y = 0; y < HO; y++) {
              const float *grow = gp + (((int64_t)g * OBLK + ob) * OB * HO + y) * WOV;
              for (int x0 = 0; x0 < WOV; x0 += 8) {
                v8 in[KW];
                for (int j = 0; j < KW; j++) in[j] = load(TAP(g * CG + c, y, i, j) + x0);
                for (int b = 0; b < OB; b++) {
                  v8 gv = load(grow + (int64_t)b * HO * WOV + x0);
                  for (int j = 0; j < KW; j++) acc[b][j] += gv * in[j];
                }
              }
            }
            for (int b = 0; b < OB && ob * OB + b < OG; b++)
              for (int j = 0; j < KW; j++) {
                float s = 0;
                for (int l = 0; l < 8; l++) s += acc[b][j][l];
                dw[((((int64_t)g * OG + ob * OB + b) * CG + c) * KH + i) * KW + j] += s;
              }
          }
  }
  free(xp);
  free(gp);
  return 0;
}
#undef pad_image
#undef TAP
"""

_GRAD_INPUT = """
/* gx[n][g*CG + c][y][x] = sum over o < OG, i, j of
   w[g*OG + o][c][i][j] * gout[n][g*OG + o][yo][xo] where the padded (y, x) is
   (yo*SH + i*DH, xo*SW + j*DW): the forward's adjoint. Each tap's products are added where
   the forward reads them, into the phase planes (TAP: 8 consecutive floats of one plane at
   any stride), which are then cropped back into the image. */
CONTRACT int NAME(void **p, int64_t lo, int64_t hi) {
  const float *gout = p[0], *w = p[1];
  float *gx = p[2];
  const size_t planes = (size_t)C * SH * SW * HPS * WPA;
  float *xp = malloc(sizeof(float) * planes);
  /* gout of one image, [G*OG][HO][WOB]: zero past WO, so whole vectors add zeros there */
  float *gp = calloc((size_t)G * OG * HO * WOB, sizeof(float));
  /* the weight as [g][input-channel block][tap][o][channel in block], zero past CG */
  float *wk = calloc((size_t)G * CBLK * KH * KW * OG * OB, sizeof(float));
  if (!xp || !gp || !wk) { free(xp); free(gp); free(wk); return -1; }
  for (int o = 0; o < G * OG; o++)
    for (int c = 0; c < CG; c++)
      for (int t = 0; t < KH * KW; t++)
        wk[((((int64_t)(o / OG) * CBLK + c / OB) * KH * KW + t) * OG + o % OG) * OB + c % OB]
            = w[((int64_t)o * CG + c) * KH * KW + t];
  for (int64_t n = lo; n < hi; n++) {
    memset(xp, 0, sizeof(float) * planes);
    for (int o = 0; o < G * OG; o++)
      for (int y = 0; y < HO; y++)
        memcpy(gp + ((int64_t)o * HO + y) * WOB, gout + ((n * G * OG + o) * HO + y) * WO,
               sizeof(float) * WO);
    for (int g = 0; g < G; g++)
      for (int cb = 0; cb < CBLK; cb++)
        for (int i = 0; i < KH; i++)
          for (int j = 0; j < KW; j++) {
            const float *wt0 = wk + ((((int64_t)g * CBLK + cb) * KH + i) * KW + j) * OG * OB;
            for (int y = 0; y < HO; y++)
              for (int x0 = 0; x0 < WO; x0 += NV * 8) {
                v8 acc[OB][NV];
                for (int b = 0; b < OB; b++)
                  for (int v = 0; v < NV; v++) acc[b][v] = (v8){0};
                const float *wt = wt0;
                for (int o = 0; o < OG; o++, wt += OB) {
                  const float *grow = gp + ((int64_t)(g * OG + o) * HO + y) * WOB + x0;
                  v8 in[NV];
                  for (int v = 0; v < NV; v++) in[v] = load(grow + 8 * v);
                  for (int b = 0; b < OB; b++)
                    for (int v = 0; v < NV; v++) acc[b][v] += wt[b] * in[v];
                }
                for (int b = 0; b < OB && cb * OB + b < CG; b++) {
                  float *dst = TAP(g * CG + cb * OB + b, y, i, j) + x0;
                  for (int v = 0; v < NV; v++) {
                    v8 sum = load(dst + 8 * v) + acc[b][v];
                    memcpy(dst + 8 * v, &sum, sizeof sum);
                  }
                }
              }
          }
    for (int c = 0; c < C; c++)  /* crop: the image's pixels, where pad_image put them */
      for (int y = 0; y < H; y++) {
        int yp = y + PT;
        const float *rows = xp + ((int64_t)(c * SH + yp % SH) * SW * HPS + yp / SH) * WPA;
        float *dst = gx + ((n * C + c) * H + y) * W;
        if (SW == 1) {
          memcpy(dst, rows + PL, sizeof(float) * W);
          continue;
        }
        for (int i = 0; i < W; i++)
          dst[i] = rows[(int64_t)(i + PL) % SW * HPS * WPA + (i + PL) / SW];
      }
  }
  free(xp);
  free(gp);
  free(wk);
  return 0;
}
#undef pad_image
#undef TAP
"""


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def _defines(x_shape, w_shape, stride, pads, dilation, groups, out_block,
             pixel_vectors) -> dict:
    """The #defines of one geometry: sizes, padding, stride, the rows of a phase plane HPS
    and the plane's row length WPA that every vector load of either kernel stays inside."""
    _, c, h, w = x_shape
    o, cg, kh, kw = w_shape
    (pt, pb), (pl, pr) = pads
    (sh, sw), (dh, dw) = stride, dilation
    hp, wp = h + pt + pb, w + pl + pr
    ho, wo = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    reach = _round_up(wo, VECTOR * pixel_vectors) + dw * (kw - 1) // sw
    return {"C": c, "H": h, "W": w, "G": groups, "CG": cg, "OG": o // groups, "KH": kh,
            "KW": kw, "SH": sh, "SW": sw, "DH": dh, "DW": dw, "PT": pt, "PL": pl,
            "HPS": -(-hp // sh), "WPA": _round_up(max(-(-wp // sw), reach), VECTOR),
            "HO": ho, "WO": wo, "WOV": _round_up(wo, VECTOR), "OB": out_block,
            "NV": pixel_vectors, "OBLK": -(-(o // groups) // out_block)}


_BODIES = {"forward": _FORWARD, "grad_filter": _GRAD_FILTER, "grad_input": _GRAD_INPUT}


def source(kind: str, defines: dict) -> str:
    """The C of `kind` ("forward", "grad_filter" or "grad_input") for one geometry."""
    return conv_kernels.assemble(f"conv_{kind}", defines, _PRELUDE + _BODIES[kind])


def _applies(xp, arrays, w_shape, pads, groups) -> bool:
    """Float32 NumPy convolutions, not depthwise, with non-negative padding, whose kernel is
    not 1 x 1: a 1 x 1 convolution is one GEMM per image on im2col's columns (the image
    itself at stride 1), which OpenBLAS runs faster than these kernels (MobileNet's
    pointwise [16, 8, 16, 16] -> 16 channels: 0.10 against 0.11 ms; [16, 32, 4, 4] -> 32,
    whose 4-pixel rows fill a quarter of the 16-pixel block: 0.07 against 0.11 ms)."""
    return (xp is np and all(a.dtype == np.float32 and 0 not in a.shape for a in arrays)
            and not (groups > 1 and w_shape[1] == 1) and tuple(w_shape[2:]) != (1, 1)
            and min(min(p) for p in pads) >= 0)


def _forward_defines(xp, x, w, stride, pads, dilation, groups) -> dict | None:
    if not _applies(xp, (x, w), w.shape, pads, groups):
        return None
    return _defines(x.shape, w.shape, stride, pads, dilation, groups, OUT_BLOCK, PIXEL_VECTORS)


def _grad_filter_defines(xp, x, g, w_shape, stride, pads, dilation, groups) -> dict | None:
    if not _applies(xp, (x, g), w_shape, pads, groups):
        return None
    # 4 x KW accumulators fit the 16 vector registers of AVX2 up to KW = 3
    block = 4 if w_shape[3] <= 3 else 2
    return _defines(x.shape, w_shape, stride, pads, dilation, groups, block, 1)


def _grad_input_defines(xp, g, w, x_shape, stride, pads, dilation, groups) -> dict | None:
    if not _applies(xp, (g, w), w.shape, pads, groups) or 0 in x_shape:
        return None
    defines = _defines(x_shape, w.shape, stride, pads, dilation, groups, OUT_BLOCK,
                       PIXEL_VECTORS)
    if (defines["HO"], defines["WO"]) != tuple(g.shape[2:]):
        return None  # (not the output of a convolution of x_shape: no adjoint of one)
    # blocks of OUT_BLOCK input channels; gout's rows padded to whole blocks of pixels
    defines.update(CBLK=-(-defines["CG"] // OUT_BLOCK),
                   WOB=_round_up(defines["WO"], VECTOR * PIXEL_VECTORS))
    return defines


_FORWARD_SOURCE = functools.partial(source, "forward")
_GRAD_FILTER_SOURCE = functools.partial(source, "grad_filter")
_GRAD_INPUT_SOURCE = functools.partial(source, "grad_input")


def conv2d(xp, x, w, stride, pads, dilation, groups):
    """The forward convolution in C, or None where it does not apply or is not ready."""
    defines = _forward_defines(xp, x, w, stride, pads, dilation, groups)
    fn = defines and conv_kernels.ready_kernel("conv_forward", defines, _FORWARD_SOURCE)
    if not fn:
        return None
    out = np.empty((x.shape[0], w.shape[0], defines["HO"], defines["WO"]), np.float32)
    # each piece writes its own images of `out`
    work = conv_kernels.macs(out, w.shape)
    return None if conv_kernels.over_images(fn, (x, w), lambda lo, hi: out, work) is None \
        else out


def conv2d_grad_filter(xp, x, g, w_shape, stride, pads, dilation, groups):
    """The weight gradient in C, or None where it does not apply or is not ready."""
    defines = _grad_filter_defines(xp, x, g, w_shape, stride, pads, dilation, groups)
    fn = defines and conv_kernels.ready_kernel("conv_grad_filter", defines,
                                               _GRAD_FILTER_SOURCE)
    if not fn:
        return None
    # each piece sums its own images into its own buffer; the buffers are added here
    parts = conv_kernels.over_images(fn, (x, g), lambda lo, hi: np.empty(w_shape, np.float32),
                                     conv_kernels.macs(g, w_shape))
    return None if parts is None else functools.reduce(np.add, parts)


def conv2d_grad_input(xp, g, w, x_shape, stride, pads, dilation, groups):
    """The input gradient in C (where the flipped-kernel convolution does not apply: strides,
    padding wider than the dilated kernel), or None where it does not apply or is not
    ready."""
    defines = _grad_input_defines(xp, g, w, x_shape, stride, pads, dilation, groups)
    fn = defines and conv_kernels.ready_kernel("conv_grad_input", defines, _GRAD_INPUT_SOURCE)
    if not fn:
        return None
    gx = np.empty(tuple(x_shape), np.float32)
    # each piece writes its own images of `gx`
    work = conv_kernels.macs(g, w.shape)
    return None if conv_kernels.over_images(fn, (g, w), lambda lo, hi: gx, work) is None \
        else gx


def plan_conv2d(xp, x, w, stride, pads, dilation, groups) -> None:
    """`conv2d` of a traced program, its arrays' `Meta`s in their place (`conv_kernels.plan`)."""
    defines = _forward_defines(xp, x, w, stride, pads, dilation, groups)
    if defines:
        conv_kernels.plan("conv_forward", defines, _FORWARD_SOURCE)


def plan_conv2d_grad_filter(xp, x, g, w_shape, stride, pads, dilation, groups) -> None:
    defines = _grad_filter_defines(xp, x, g, w_shape, stride, pads, dilation, groups)
    if defines:
        conv_kernels.plan("conv_grad_filter", defines, _GRAD_FILTER_SOURCE)


def plan_conv2d_grad_input(xp, g, w, x_shape, stride, pads, dilation, groups) -> None:
    defines = _grad_input_defines(xp, g, w, x_shape, stride, pads, dilation, groups)
    if defines:
        conv_kernels.plan("conv_grad_input", defines, _GRAD_INPUT_SOURCE)


nn_conv.NATIVE_KERNELS.update(conv2d=conv2d, conv2d_grad_filter=conv2d_grad_filter,
                              conv2d_grad_input=conv2d_grad_input)
nn_conv.NATIVE_PLANS.update(conv2d=plan_conv2d, conv2d_grad_filter=plan_conv2d_grad_filter,
                            conv2d_grad_input=plan_conv2d_grad_input)
