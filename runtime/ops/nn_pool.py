"""Pooling and resizing on NCHW images.

Every op here is paired with its adjoint, and each is the other's gradient:

- `max_pool2d(x) -> (out, index)` saves the flat H*W index of each window's maximum (Paddle's
  `return_mask`); `max_pool2d_grad(g, index, x)` scatters into x's shape and
  `max_pool2d_pick(x, index)` gathers from it. `adaptive_max_pool2d` shares the pair.
- `avg_pool2d(x)` and `avg_pool2d_grad(g, x)` (the window sum divided by the count; with
  `exclusive`, padding is not counted, as in Paddle).
- `resize2d(x)` and `resize2d_grad(g, x)`: any separable linear resampling `A_h @ x @ A_w^T`
  whose matrices depend only on sizes - adaptive average pooling, nearest and bilinear
  interpolation (with Paddle's `align_corners` / `align_mode` coordinate rules).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..dtypes import int64
from . import infer as I
from .nn import check_float
from .nn_conv import col2im, out_size, resolve_padding, windows
from .registry import Meta, OpError, bind, register

_ONE = (1, 1)

# ---- window geometry ------------------------------------------------------------------------


def _geometry(x_hw, kernel, stride, padding, ceil_mode):
    """(pads, output size); ceil_mode pads the end so that the last partial window fits."""
    pads = resolve_padding(padding, x_hw, kernel, stride, _ONE)
    hw = []
    for n, k, s, p in zip(x_hw, kernel, stride, pads):
        o = out_size(n, k, s, p, 1, ceil_mode)
        if ceil_mode and n != -1 and (o - 1) * s >= n + p[0]:
            o -= 1  # a window may not start in the end padding
        hw.append(o)
    if ceil_mode:
        pads = tuple((p[0], max(p[1], (o - 1) * s + k - n - p[0]))
                     for n, k, s, p, o in zip(x_hw, kernel, stride, pads, hw))
    return pads, tuple(hw)


def check_padding(op, kernel, padding):
    """A window must never lie entirely in the padding (its max would be -inf)."""
    if padding not in ("SAME", "VALID") and any(
            p > k // 2 for p, k in zip(padding, (kernel[0],) * 2 + (kernel[1],) * 2)):
        raise OpError(f"{op}: padding {list(padding)} must be at most half the kernel size "
                      f"{list(kernel)}")


def _pool_infer(op, x, kernel, stride, padding, ceil_mode):
    check_float(op, "x", x)
    if len(x.shape) != 4:
        raise OpError(f"{op}: x must be 4-D [N, C, H, W], got shape {I.fmt(x.shape)}")
    check_padding(op, kernel, padding)
    _, hw = _geometry(x.shape[2:], kernel, stride, padding, ceil_mode)
    _check_fits(op, x.shape, kernel, padding, hw)
    return Meta(tuple(x.shape[:2]) + hw, x.dtype)


def _check_fits(op, x_shape, kernel, padding, hw):
    if any(d == 0 or d < -1 for d in hw):
        raise OpError(f"{op}: kernel {list(kernel)} does not fit into x of shape "
                      f"{I.fmt(tuple(x_shape))} with padding {padding}")


# ---- max pooling ----------------------------------------------------------------------------

# C kernels filled in by runtime/program/pool_native.py (this package may not import the
# program package): "max_pool2d" and "max_pool2d_grad", NumPy's bits, each returning None
# where it does not apply, and the NumPy code runs
NATIVE_KERNELS: dict = {}


def _max_kernel(xp, x, kernel, stride, padding, ceil_mode=False):
    check_padding("max_pool2d", kernel, padding)
    n, c, h, w = x.shape
    pads, hw = _geometry((h, w), kernel, stride, padding, ceil_mode)
    _check_fits("max_pool2d", x.shape, kernel, padding, hw)  # (eager runs no infer)
    native = NATIVE_KERNELS.get("max_pool2d")
    found = native and native(xp, x, kernel, stride, pads, hw)
    if found is not None:
        return found
    win = windows(xp, x, kernel, stride, _ONE, pads, hw, fill=-xp.inf)
    flat = win.reshape(n, c, hw[0], hw[1], -1)
    arg = flat.argmax(axis=-1)
    out = xp.take_along_axis(flat, arg[..., None], -1)[..., 0]
    rows = xp.arange(hw[0]).reshape(-1, 1) * stride[0] + arg // kernel[1] - pads[0][0]
    cols = xp.arange(hw[1]) * stride[1] + arg % kernel[1] - pads[1][0]
    return out, (rows * w + cols).astype(np.int64)


def _max_infer(x, kernel, stride, padding, ceil_mode=False):
    out = _pool_infer("max_pool2d", x, kernel, stride, padding, ceil_mode)
    return out, Meta(out.shape, int64)


def _scatter_kernel(xp, g, index, x):
    native = NATIVE_KERNELS.get("max_pool2d_grad")
    found = native and native(xp, g, index, x.shape)
    if found is not None:
        return found
    n, c, h, w = x.shape
    flat = index.reshape(n * c, -1) + xp.arange(n * c).reshape(-1, 1) * (h * w)
    out = xp.bincount(flat.ravel(), weights=g.ravel(), minlength=n * c * h * w)
    return out.astype(g.dtype, copy=False).reshape(x.shape)


def _pick_kernel(xp, x, index):
    n, c = x.shape[:2]
    flat = xp.take_along_axis(x.reshape(n, c, -1), index.reshape(n, c, -1), -1)
    return flat.reshape(index.shape)


MAX_POOL2D = register(
    "max_pool2d", kernel=_max_kernel, infer=_max_infer,
    grad=lambda ins, outs, gs, a: [bind(MAX_POOL2D_GRAD, (gs[0], outs[1], ins[0]), {})],
    doc="Max pooling; also returns the flat H*W index of each maximum.")
MAX_POOL2D_GRAD = register(
    "max_pool2d_grad", kernel=_scatter_kernel,
    infer=lambda g, index, x: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(MAX_POOL2D_PICK, (gs[0], ins[1]), {}), None, None],
    doc="Scatter-add g into x's shape at the saved max-pool indices.")
MAX_POOL2D_PICK = register(
    "max_pool2d_pick", kernel=_pick_kernel,
    infer=lambda x, index: Meta(index.shape, x.dtype),
    grad=lambda ins, outs, gs, a: [bind(MAX_POOL2D_GRAD, (gs[0], ins[1], ins[0]), {}), None],
    doc="Gather x at max-pool indices (the adjoint of max_pool2d_grad).")


def _pool_attrs(kernel, stride, padding, ceil_mode):
    return {"kernel": list(kernel), "stride": list(stride),
            "padding": padding if isinstance(padding, str) else list(padding),
            "ceil_mode": bool(ceil_mode)}


def max_pool2d(x, kernel, stride, padding=(0, 0, 0, 0), ceil_mode=False):
    """Returns (out, index); see `runtime.nn.functional.max_pool2d`."""
    return bind(MAX_POOL2D, (x,), _pool_attrs(kernel, stride, padding, ceil_mode))


def _bins(n, o):
    """Paddle's adaptive bins: bin i covers [floor(i*n/o), ceil((i+1)*n/o))."""
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _adaptive_max_kernel(xp, x, size):
    n, c, h, w = x.shape
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    out = xp.empty((n, c, oh, ow), dtype=x.dtype)
    index = xp.empty((n, c, oh, ow), dtype=np.int64)
    for i, (r0, r1) in enumerate(_bins(h, oh)):
        for j, (c0, c1) in enumerate(_bins(w, ow)):
            win = x[:, :, r0:r1, c0:c1].reshape(n, c, -1)
            arg = win.argmax(axis=-1)
            out[:, :, i, j] = xp.take_along_axis(win, arg[..., None], -1)[..., 0]
            index[:, :, i, j] = (r0 + arg // (c1 - c0)) * w + c0 + arg % (c1 - c0)
    return out, index


def _adaptive_max_infer(x, size):
    check_float("adaptive_max_pool2d", "x", x)
    if len(x.shape) != 4:
        raise OpError(f"adaptive_max_pool2d: x must be 4-D [N, C, H, W], got shape "
                      f"{I.fmt(x.shape)}")
    hw = tuple(d if s is None else s for d, s in zip(x.shape[2:], size))
    return Meta(tuple(x.shape[:2]) + hw, x.dtype), Meta(tuple(x.shape[:2]) + hw, int64)


ADAPTIVE_MAX_POOL2D = register(
    "adaptive_max_pool2d", kernel=_adaptive_max_kernel, infer=_adaptive_max_infer,
    grad=lambda ins, outs, gs, a: [bind(MAX_POOL2D_GRAD, (gs[0], outs[1], ins[0]), {})],
    doc="Max over adaptive bins (see adaptive_avg_pool2d); also returns the flat indices.")


def adaptive_max_pool2d(x, size):
    """Returns (out, index); None in `size` keeps that dim."""
    return bind(ADAPTIVE_MAX_POOL2D, (x,), {"size": [None if s is None else int(s)
                                                     for s in size]})


# ---- average pooling ------------------------------------------------------------------------

def _counts(xp, x_hw, kernel, stride, pads, hw, exclusive, dtype):
    """[Ho, Wo] number of elements each window averages."""
    if not exclusive:
        return dtype.type(kernel[0] * kernel[1])
    sizes = []
    for n, k, s, p, o in zip(x_hw, kernel, stride, pads, hw):
        start = np.arange(o) * s - p[0]
        sizes.append(np.minimum(start + k, n) - np.maximum(start, 0))
    return xp.asarray(np.outer(*sizes).astype(dtype))


def _avg_kernel(xp, x, kernel, stride, padding, ceil_mode=False, exclusive=True):
    check_padding("avg_pool2d", kernel, padding)
    pads, hw = _geometry(x.shape[2:], kernel, stride, padding, ceil_mode)
    _check_fits("avg_pool2d", x.shape, kernel, padding, hw)  # (eager runs no infer)
    total = windows(xp, x, kernel, stride, _ONE, pads, hw).sum(axis=(4, 5))
    return total / _counts(xp, x.shape[2:], kernel, stride, pads, hw, exclusive, x.dtype)


def _avg_grad_kernel(xp, g, x, kernel, stride, padding, ceil_mode=False, exclusive=True):
    pads, hw = _geometry(x.shape[2:], kernel, stride, padding, ceil_mode)
    share = g / _counts(xp, x.shape[2:], kernel, stride, pads, hw, exclusive, g.dtype)
    return col2im(xp, lambda i, j: share, x.shape, kernel, stride, _ONE, pads, hw)


def _linear_pair(name, kernel, infer, adjoint_kernel, doc, adjoint_doc):
    """Register a linear op `name(x)` and its adjoint `name_grad(g, x)` (x only gives the
    shape), each the other's gradient, with the same attrs."""
    op = register(
        name, kernel=kernel, infer=infer,
        grad=lambda ins, outs, gs, a: [bind(adjoint, (gs[0], ins[0]), a)], doc=doc)
    adjoint = register(
        f"{name}_grad", kernel=adjoint_kernel, infer=lambda g, x, **a: Meta(x.shape, g.dtype),
        grad=lambda ins, outs, gs, a: [bind(op, (gs[0],), a), None], doc=adjoint_doc)
    return op, adjoint


AVG_POOL2D, AVG_POOL2D_GRAD = _linear_pair(
    "avg_pool2d", _avg_kernel,
    lambda x, kernel, stride, padding, ceil_mode=False, exclusive=True: _pool_infer(
        "avg_pool2d", x, kernel, stride, padding, ceil_mode),
    _avg_grad_kernel,
    doc="Average pooling; `exclusive` leaves padding out of the count.",
    adjoint_doc="The adjoint of avg_pool2d: spread each g over its window.")


def avg_pool2d(x, kernel, stride, padding=(0, 0, 0, 0), ceil_mode=False, exclusive=True):
    attrs = _pool_attrs(kernel, stride, padding, ceil_mode)
    attrs["exclusive"] = bool(exclusive)
    return bind(AVG_POOL2D, (x,), attrs)


# ---- separable resampling: adaptive average pooling and interpolation ------------------------

def _adaptive(n_in, n_out, **_):
    m = np.zeros((n_out, n_in))
    for i, (lo, hi) in enumerate(_bins(n_in, n_out)):
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _ratio(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale else n_in / n_out


def _nearest(n_in, n_out, align_corners=False, scale=None, **_):
    r = _ratio(n_in, n_out, align_corners, scale)
    src = np.arange(n_out) * r + (0.5 if align_corners else 0.0)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), np.minimum(src.astype(np.int64), n_in - 1)] = 1.0
    return m


def _bilinear(n_in, n_out, align_corners=False, align_mode=0, scale=None):
    r = _ratio(n_in, n_out, align_corners, scale)
    half_pixel = align_mode == 0 and not align_corners
    dst = np.arange(n_out)
    src = np.maximum((dst + 0.5) * r - 0.5, 0.0) if half_pixel else dst * r
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = src - lo
    m = np.zeros((n_out, n_in))
    np.add.at(m, (dst, lo), 1.0 - frac)
    np.add.at(m, (dst, hi), frac)
    return m


RESAMPLERS = {"adaptive_avg": _adaptive, "nearest": _nearest, "bilinear": _bilinear}


@functools.lru_cache(maxsize=256)
def _matrix(kind, n_in, n_out, align_corners, align_mode, scale):
    return RESAMPLERS[kind](n_in, n_out, align_corners=align_corners, align_mode=align_mode,
                            scale=scale)


def _out_dims(x_hw, size, scale):
    """Output size from `size` (None: keep) or `scale` (floor(n * scale)); -1 stays -1."""
    out = []
    for i, n in enumerate(x_hw):
        if size is not None and size[i] is not None:
            out.append(int(size[i]))
        elif scale is not None:
            out.append(-1 if n == -1 else math.floor(n * scale[i]))
        else:
            out.append(n)
    return tuple(out)


def _matrices(xp, x_hw, dtype, kind, size=None, scale=None, align_corners=False,
              align_mode=0):
    out = _out_dims(x_hw, size, scale)
    return [xp.asarray(_matrix(kind, n, o, align_corners, align_mode,
                               None if scale is None else scale[i]).astype(dtype))
            for i, (n, o) in enumerate(zip(x_hw, out))]


def _resize_kernel(xp, x, **a):
    ah, aw = _matrices(xp, x.shape[2:], x.dtype, **a)
    return xp.matmul(xp.matmul(ah, x), aw.T)


def _resize_grad_kernel(xp, g, x, **a):
    ah, aw = _matrices(xp, x.shape[2:], g.dtype, **a)
    return xp.matmul(xp.matmul(ah.T, g), aw)


def _resize_infer(x, kind, size=None, scale=None, align_corners=False, align_mode=0):
    op = "adaptive_avg_pool2d" if kind == "adaptive_avg" else "interpolate"
    check_float(op, "x", x)
    if len(x.shape) != 4:
        raise OpError(f"{op}: x must be 4-D [N, C, H, W], got shape {I.fmt(x.shape)}")
    if kind not in RESAMPLERS:
        raise OpError(f"interpolate: mode must be 'nearest' or 'bilinear', got {kind!r}")
    out = _out_dims(x.shape[2:], size, scale)
    if any(d == 0 or d < -1 for d in out):
        raise OpError(f"{op}: output size {list(out)} must be positive (x has shape "
                      f"{I.fmt(x.shape)})")
    return Meta(tuple(x.shape[:2]) + out, x.dtype)


RESIZE2D, RESIZE2D_GRAD = _linear_pair(
    "resize2d", _resize_kernel, _resize_infer, _resize_grad_kernel,
    doc="Separable linear resampling A_h @ x @ A_w^T (adaptive avg pool, interpolate).",
    adjoint_doc="The adjoint of resize2d: A_h^T @ g @ A_w.")


def resize2d(x, kind, size=None, scale=None, align_corners=False, align_mode=0):
    """Resample the last two dims; see `runtime.nn.functional.interpolate`."""
    attrs = {"kind": kind}
    if size is not None:
        attrs["size"] = [None if s is None else int(s) for s in size]
    if scale is not None:
        attrs["scale"] = [float(s) for s in scale]
    if align_corners:
        attrs["align_corners"] = True
    if align_mode:
        attrs["align_mode"] = int(align_mode)
    return bind(RESIZE2D, (x,), attrs)


METHODS: dict = {}

__all__: list = []
