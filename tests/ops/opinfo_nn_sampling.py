"""OpInfos for `F.grid_sample` and `F.affine_grid` against per-point NumPy references
(values, finite-difference gradients for the image, the grid and theta, static vs eager)."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime.nn.functional as F


def _pixel(coord, size, align_corners, padding_mode):
    p = (coord + 1) * (size - 1) / 2 if align_corners else ((coord + 1) * size - 1) / 2
    return min(max(p, 0.0), size - 1.0) if padding_mode == "border" else p


def _grid_sample_ref(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True):
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    out = np.zeros((n, c, ho, wo))

    def at(b, yi, xi):
        inside = 0 <= yi < h and 0 <= xi < w
        return x[b, :, yi, xi] if inside else np.zeros(c)

    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                px = _pixel(grid[b, i, j, 0], w, align_corners, padding_mode)
                py = _pixel(grid[b, i, j, 1], h, align_corners, padding_mode)
                if mode == "nearest":
                    round_half_away = [int(np.sign(v) * np.floor(abs(v) + 0.5)) for v in (py, px)]
                    out[b, :, i, j] = at(b, *round_half_away)
                    continue
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                fx, fy = px - x0, py - y0
                out[b, :, i, j] = ((1 - fx) * (1 - fy) * at(b, y0, x0) + fx * (1 - fy)
                                   * at(b, y0, x0 + 1) + (1 - fx) * fy * at(b, y0 + 1, x0)
                                   + fx * fy * at(b, y0 + 1, x0 + 1))
    return out


def _grid_samples(rng):
    def grid(*shape, spread=1.2):
        return rng.uniform(-spread, spread, size=shape + (2,))
    return [Sample((randn(rng, 2, 3, 4, 5), grid(2, 3, 4))),
            Sample((randn(rng, 1, 2, 3, 4), grid(1, 5, 2)), {"align_corners": False}),
            Sample((randn(rng, 2, 1, 4, 4), grid(2, 3, 3, spread=1.5)),
                   {"padding_mode": "border"}),
            Sample((randn(rng, 1, 2, 4, 3), grid(1, 2, 3, spread=1.5)),
                   {"padding_mode": "border", "align_corners": False}),
            Sample((randn(rng, 2, 2, 4, 3), grid(2, 2, 3)), {"align_corners": False,
                                                               "padding_mode": "zeros"})]


def _nearest_samples(rng):
    """The grid gets no gradient in 'nearest' mode (rounding is flat): only x is checked."""
    def grid(*shape, spread=1.2):
        return rng.uniform(-spread, spread, size=shape + (2,))
    return [Sample((randn(rng, 2, 2, 5, 4), grid(2, 3, 3)), {"mode": "nearest"}),
            Sample((randn(rng, 1, 1, 3, 3), grid(1, 4, 4, spread=1.4)),
                   {"mode": "nearest", "align_corners": False, "padding_mode": "border"})]


def _affine_grid_ref(theta, out_shape, align_corners=True):
    n, _, h, w = out_shape

    def axis(size):
        if size == 1:
            return np.zeros(1)  # the one pixel's center
        lin = np.linspace(-1, 1, size)
        return lin if align_corners else lin * (size - 1) / size

    grid = np.zeros((n, h, w, 2))
    for b in range(n):
        for i, y in enumerate(axis(h)):
            for j, x in enumerate(axis(w)):
                grid[b, i, j] = theta[b] @ np.array([x, y, 1.0])
    return grid


OPINFOS = [
    OpInfo("grid_sample", F.grid_sample, _grid_sample_ref, _grid_samples, error_samples=[
        ErrorSample((np.ones((1, 1, 2, 2)), np.zeros((1, 2, 2, 2))), {"padding_mode": "reflection"},
                    ValueError, r"grid_sample: padding_mode must be one of \('zeros', 'border'\), "
                                r"got 'reflection'"),
        ErrorSample((np.ones((1, 1, 2, 2)), np.zeros((1, 2, 2, 2))), {"mode": "bicubic"},
                    ValueError, r"grid_sample: mode must be one of"),
        ErrorSample((np.ones((1, 1, 2, 2)), np.zeros((1, 2, 2, 3))), {}, ValueError,
                    r"grid_sample: x must be \[N, C, H, W\] and grid \[N, H_out, W_out, 2\], got "
                    r"shapes \[1, 1, 2, 2\] and \[1, 2, 2, 3\]")]),
    OpInfo("grid_sample_nearest", F.grid_sample, _grid_sample_ref, _nearest_samples,
           grad=(0,)),
    OpInfo("affine_grid", F.affine_grid, _affine_grid_ref,
           lambda rng: [Sample((randn(rng, 2, 2, 3), [2, 3, 4, 5])),
                        Sample((randn(rng, 1, 2, 3), [1, 1, 3, 2]), {"align_corners": False}),
                        Sample((randn(rng, 1, 2, 3), [1, 1, 1, 3]))],
           error_samples=[
               ErrorSample((np.ones((1, 3, 3)), [1, 1, 2, 2]), {}, ValueError,
                           r"affine_grid: theta must be \[N, 2, 3\], got shape \[1, 3, 3\]")]),
]
