"""`F.affine_grid` and `F.grid_sample`: spatial transformer networks' sampling, Paddle's
arguments and defaults (`align_corners=True`).

A grid holds, per output pixel, the (x, y) point of the input to read, normalised to [-1, 1]
across the input's width and height: -1 and 1 are the centers of the corner pixels with
`align_corners=True`, their outer edges otherwise. `grid_sample` reads the input there by
bilinear interpolation (or the nearest pixel). Both are compositions of registered ops: the
four corner reads are `take_along_axis` on the flattened image, the weights are arithmetic on
the grid, so the gradients with respect to the image and to the grid (and through
`affine_grid` to theta) come from those ops, in eager mode and in converted code alike.
"""
from __future__ import annotations

import numpy as np

from ...dtypes import int64
from ...ops import gather as _gather
from ...ops import linalg as _linalg
from ...ops import logic as _logic
from ...ops import math as _math
from ...ops import shape as _shape
from ...ops.registry import OpError
from ...tensor import constant

_MODES = ("bilinear", "nearest")
_PADDINGS = ("zeros", "border")


def _base_coords(size: int, align_corners: bool) -> np.ndarray:
    """The normalised coordinates of `size` pixel centers along one axis (0 for one pixel:
    its center, whatever align_corners says)."""
    coords = np.linspace(-1.0, 1.0, size) if size > 1 else np.zeros(1)
    return coords if align_corners else coords * (size - 1) / size


def affine_grid(theta, out_shape, align_corners: bool = True, name=None):
    """The sampling grid [N, H, W, 2] of the affine maps `theta` [N, 2, 3] for an output of
    `out_shape` [N, C, H, W]: grid[n, i, j] = theta[n] @ (x_j, y_i, 1).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> identity = rt.to_tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(identity, [1, 1, 2, 3])[0, 1].tolist()
    [[-1.0, 1.0], [0.0, 1.0], [1.0, 1.0]]
    """
    if hasattr(out_shape, "tolist"):
        out_shape = out_shape.tolist()
    if len(out_shape) != 4:
        raise OpError(f"affine_grid: out_shape must be [N, C, H, W], got {list(out_shape)}")
    if theta.ndim != 3 or list(theta.shape[1:]) != [2, 3]:
        raise OpError(f"affine_grid: theta must be [N, 2, 3], got shape {list(theta.shape)}")
    h, w = int(out_shape[2]), int(out_shape[3])
    xs, ys = _base_coords(w, align_corners), _base_coords(h, align_corners)
    base = np.stack([np.tile(xs, h), np.repeat(ys, w), np.ones(h * w)], axis=-1)  # [H*W, 3]
    base = constant(base, dtype=theta.dtype)
    grid = _linalg.matmul(_shape.unsqueeze(base, 0), theta, transpose_y=True)  # [N, H*W, 2]
    return _shape.reshape(grid, [-1, h, w, 2])


def _unnormalize(coord, size: int, align_corners: bool, padding_mode: str):
    """Normalised coordinates -> pixel coordinates along an axis of `size` pixels."""
    if align_corners:
        pixel = (coord + 1.0) * ((size - 1) / 2.0)
    else:
        pixel = ((coord + 1.0) * size - 1.0) / 2.0
    if padding_mode == "border":
        pixel = _math.clip(pixel, 0.0, float(size - 1))
    return pixel


class _FlatImage:
    """x [N, C, H, W] as [N, C, H*W], read at integer pixel coordinates [N, Ho*Wo]."""

    def __init__(self, x):
        self.n, self.c, self.h, self.w = x.shape
        self.flat = _shape.reshape(x, [-1, self.c, self.h * self.w])

    def read(self, xi, yi):
        """x at integer float coordinates (xi, yi) [N, L]; 0 outside the image."""
        inside = _logic.logical_and(
            _logic.logical_and(xi >= 0.0, xi <= float(self.w - 1)),
            _logic.logical_and(yi >= 0.0, yi <= float(self.h - 1)))
        xc = _math.clip(xi, 0.0, float(self.w - 1))
        yc = _math.clip(yi, 0.0, float(self.h - 1))
        index = _math.cast(yc * float(self.w) + xc, int64)
        index = _shape.expand(_shape.unsqueeze(index, 1), [-1, self.c, index.shape[-1]])
        values = _gather.take_along_axis(self.flat, index, 2)
        return values * _math.cast(_shape.unsqueeze(inside, 1), values.dtype)


def grid_sample(x, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = True, name=None):
    """Sample `x` [N, C, H, W] at the points of `grid` [N, Ho, Wo, 2] ((x, y) in [-1, 1]);
    returns [N, C, Ho, Wo]. Points outside read 0 (`padding_mode='zeros'`) or the nearest
    edge pixel ('border'); 'nearest' rounds halves away from zero.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> x = rt.to_tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> F.grid_sample(x, rt.to_tensor([[[[0.0, 0.0], [1.0, -1.0]]]])).tolist()
    [[[[1.5, 1.0]]]]
    """
    if mode not in _MODES:
        raise OpError(f"grid_sample: mode must be one of {_MODES}, got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise OpError(f"grid_sample: padding_mode must be one of {_PADDINGS}, got "
                      f"{padding_mode!r} ('reflection' is not supported)")
    if x.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2:
        raise OpError(f"grid_sample: x must be [N, C, H, W] and grid [N, H_out, W_out, 2], "
                      f"got shapes {list(x.shape)} and {list(grid.shape)}")
    if -1 in tuple(x.shape[1:]) or -1 in tuple(grid.shape[1:]):
        raise OpError(f"grid_sample: x has shape {list(x.shape)} and grid {list(grid.shape)}; "
                      "all but the batch dim must be known when the program is built (an "
                      "InputSpec may leave only the batch dim None)")
    image = _FlatImage(x)
    ho, wo = grid.shape[1], grid.shape[2]
    points = _shape.reshape(grid, [-1, ho * wo, 2])
    px = _unnormalize(points[:, :, 0], image.w, align_corners, padding_mode)
    py = _unnormalize(points[:, :, 1], image.h, align_corners, padding_mode)
    if mode == "nearest":
        out = image.read(_math.round(px), _math.round(py))
    else:
        x0, y0 = _math.floor(px), _math.floor(py)
        wx1, wy1 = _shape.unsqueeze(px - x0, 1), _shape.unsqueeze(py - y0, 1)
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1
        out = (image.read(x0, y0) * (wx0 * wy0) + image.read(x0 + 1.0, y0) * (wx1 * wy0)
               + image.read(x0, y0 + 1.0) * (wx0 * wy1)
               + image.read(x0 + 1.0, y0 + 1.0) * (wx1 * wy1))
    return _shape.reshape(out, [-1, image.c, ho, wo])
