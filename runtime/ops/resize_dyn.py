"""Interpolation to a size known only when the program runs (`F.interpolate(x, size=[h * 2,
w * 2])` with `h, w` read from `rt.shape(x)` in converted code).

`resize2d_dyn(x, size)` takes the output [H, W] as an int tensor input instead of an attr; it
shares the resampling matrices of `resize2d` (nn_pool.py). Eager code never binds it: there
the sizes are numbers. Its output's spatial dims are unknown (-1) in the program.
"""
from __future__ import annotations

from .. import backend
from . import infer as I
from .nn import check_float
from .nn_pool import RESAMPLERS, _matrices
from .registry import Meta, OpError, OpTypeError, bind, register


def _hw(size):
    hw = [int(v) for v in backend.to_numpy(size).reshape(-1)]
    if len(hw) != 2 or min(hw) <= 0:
        raise OpError(f"interpolate: size must be 2 positive ints at run time, got {hw}")
    return hw


def _kernel(xp, x, size, kind, align_corners=False, align_mode=0):
    ah, aw = _matrices(xp, x.shape[2:], x.dtype, kind, _hw(size), None, align_corners,
                       align_mode)
    return xp.matmul(xp.matmul(ah, x), aw.T)


def _grad_kernel(xp, g, x, size, kind, align_corners=False, align_mode=0):
    ah, aw = _matrices(xp, x.shape[2:], g.dtype, kind, _hw(size), None, align_corners,
                       align_mode)
    return xp.matmul(xp.matmul(ah.T, g), aw)


def _infer(x, size, kind, align_corners=False, align_mode=0):
    check_float("interpolate", "x", x)
    if len(x.shape) != 4:
        raise OpError(f"interpolate: x must be 4-D [N, C, H, W], got shape {I.fmt(x.shape)}")
    if kind not in RESAMPLERS:
        raise OpError(f"interpolate: mode must be 'nearest' or 'bilinear', got {kind!r}")
    I.check_tensor("interpolate", "size", size)
    if size.dtype.name not in ("int32", "int64") or size.shape not in ((2,), (-1,)):
        raise OpTypeError(f"interpolate: size must be an int tensor of shape [2], got "
                          f"{size.dtype.name}{I.fmt(size.shape)}")
    return Meta(tuple(x.shape[:2]) + (-1, -1), x.dtype)


RESIZE2D_DYN = register(
    "resize2d_dyn", kernel=_kernel, infer=_infer,
    grad=lambda ins, outs, gs, a: [bind(RESIZE2D_DYN_GRAD, (gs[0], ins[0], ins[1]), a), None],
    doc="resize2d to an [H, W] given as a run-time int tensor.")
RESIZE2D_DYN_GRAD = register(
    "resize2d_dyn_grad", kernel=_grad_kernel,
    infer=lambda g, x, size, **a: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(RESIZE2D_DYN, (gs[0], ins[2]), a), None, None],
    doc="The adjoint of resize2d_dyn: A_h^T @ g @ A_w.")


def resize2d_dyn(x, size, kind, align_corners=False, align_mode=0):
    """Resample the last two dims of `x` to `size` (an int tensor [2])."""
    attrs = {"kind": kind}
    if align_corners:
        attrs["align_corners"] = True
    if align_mode:
        attrs["align_mode"] = int(align_mode)
    return bind(RESIZE2D_DYN, (x, size), attrs)


METHODS: dict = {}
