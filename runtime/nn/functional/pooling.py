"""2-D pooling (`F.max_pool2d`, `F.avg_pool2d`, `F.adaptive_avg_pool2d`) and the 1-D forms
built on it, with Paddle's signatures."""
from __future__ import annotations

from ... import core
from ...ops import nn_pool as _pool
from ...ops import shape as _shape
from ...ops.registry import OpError
from . import pooling_run_time as _run_time
from .conv import from_nchw, padding4, pair, to_nchw


def _sizes(v) -> tuple:
    """A pair of sizes that may hold values the program computes (left as they are)."""
    v = tuple(v) if isinstance(v, (list, tuple)) else (v, v)
    return v * 2 if len(v) == 1 else v


def _padding4(padding, op: str):
    """`padding4`'s [top, bottom, left, right], where values the program computes (the
    counter of a graph loop) stay as they are."""
    if not _run_time.computed(padding):
        return padding4(padding, op)
    p = [padding] if isinstance(padding, core.VariableBase) else list(padding)
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return [p[0], p[0], p[1], p[1]]
    if len(p) == 4:
        return p
    raise OpError(f"{op}: padding must have 1, 2 or 4 numbers, got {len(p)}")


def _window(op, kernel_size, stride, padding):
    if _run_time.computed(kernel_size, stride, padding):  # (sizes known when the program runs)
        kernel = _sizes(kernel_size)
        return kernel, kernel if stride is None else _sizes(stride), _padding4(padding, op)
    kernel = pair(kernel_size, "kernel_size", op)
    stride = kernel if stride is None else pair(stride, "stride", op)
    return kernel, stride, padding4(padding, op)


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask: bool = False,
               ceil_mode: bool = False, data_format: str = "NCHW", name=None):
    """Max over each window; `return_mask` also returns the flat H*W index of each maximum.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.max_pool2d(rt.ones([1, 1, 4, 4]), 2).shape
    [1, 1, 2, 2]
    """
    kernel, stride, padding = _window("max_pool2d", kernel_size, stride, padding)
    pool = (_run_time.max_pool2d if _run_time.computed(kernel, stride, padding) else
            _pool.max_pool2d)
    out, mask = pool(to_nchw(x, data_format, "max_pool2d"), kernel, stride, padding, ceil_mode)
    out = from_nchw(out, data_format)
    return (out, from_nchw(mask, data_format)) if return_mask else out


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
               name=None):
    """Mean over each window; with `exclusive` (default) padding is not counted."""
    kernel, stride, padding = _window("avg_pool2d", kernel_size, stride, padding)
    x = to_nchw(x, data_format, "avg_pool2d")
    if _run_time.computed(kernel, stride, padding):
        out = _run_time.avg_pool(x, kernel, stride, padding, ceil_mode, exclusive,
                                   divisor_override)
    elif divisor_override:
        out = _pool.avg_pool2d(x, kernel, stride, padding, ceil_mode, exclusive=False)
        out = out * (kernel[0] * kernel[1] / divisor_override)
    else:
        out = _pool.avg_pool2d(x, kernel, stride, padding, ceil_mode, exclusive)
    return from_nchw(out, data_format)


def _output_size_2d(op: str, output_size) -> list:
    """[h, w] from an int, None or 2 values (None in them keeps that dim)."""
    if output_size is None or isinstance(output_size, int):
        return [output_size, output_size]
    size = list(output_size)
    if len(size) != 2:
        raise OpError(f"{op}: output_size must be an int or 2 values, got {output_size}")
    return size


def adaptive_avg_pool2d(x, output_size, data_format: str = "NCHW", name=None):
    """Average over bins that tile the input evenly (bin i covers [floor(i*H/h),
    ceil((i+1)*H/h))); None in output_size keeps that dim.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.adaptive_avg_pool2d(rt.ones([2, 3, 7, 7]), 1).shape
    [2, 3, 1, 1]
    """
    size = _output_size_2d("adaptive_avg_pool2d", output_size)
    x = to_nchw(x, data_format, "adaptive_avg_pool2d")
    if _run_time.computed(size):
        out = _run_time.avg_pool(x, _kept(size, x), None, None, adaptive=True)
    else:
        out = _pool.resize2d(x, "adaptive_avg", size)
    return from_nchw(out, data_format)


def _kept(size, x) -> list:
    """An adaptive size whose None entries keep x's H or W."""
    return [_shape.shape(x)[2 + i] if s is None else s for i, s in enumerate(size)]


def _one_size(v):
    """A 1-D pool's size from an int or a one-entry list (a value the program computes stays
    a tensor: a size known when the program runs)."""
    if isinstance(v, (list, tuple)):
        return v[0]
    return int(v) if hasattr(v, "dtype") and not _run_time.computed(v) else v


def _pool1d(pool2d, x, kernel_size, stride, padding, **kwargs):
    """A 1-D pool over [N, C, L] is the 2-D pool over [N, C, 1, L]."""
    k = _one_size(kernel_size)
    s = k if stride is None else _one_size(stride)
    if isinstance(padding, str):
        pad = padding
    else:
        p = [padding] if isinstance(padding, (int, core.VariableBase)) else list(padding)
        pad = [0, 0, p[0], p[-1]]
    if _run_time.computed(k, s, pad):  # (sizes known when the program runs)
        return _run_time_pool1d(pool2d, x, k, s, pad, **kwargs)
    out = pool2d(_shape.unsqueeze(x, 2), (1, k), (1, s), pad, **kwargs)
    if isinstance(out, tuple):
        return tuple(_shape.squeeze(o, 2) for o in out)
    return _shape.squeeze(out, 2)


def _run_time_pool1d(pool2d, x, k, s, pad, return_mask=False, exclusive=True,
                     ceil_mode=False):
    pad = _padding4(pad, "pool1d")
    pad = pad if isinstance(pad, str) else tuple(pad[2:])
    if pool2d is avg_pool2d:
        return _run_time.avg_pool1d(x, k, s, pad, ceil_mode, exclusive)
    out, mask = _run_time.max_pool1d(x, k, s, pad, ceil_mode)
    return (out, mask) if return_mask else out


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask: bool = False,
               ceil_mode: bool = False, name=None):
    """Max pooling over the last dim of [N, C, L]."""
    return _pool1d(max_pool2d, x, kernel_size, stride, padding, return_mask=return_mask,
                   ceil_mode=ceil_mode)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive: bool = True,
               ceil_mode: bool = False, name=None):
    """Average pooling over the last dim of [N, C, L]."""
    return _pool1d(avg_pool2d, x, kernel_size, stride, padding, exclusive=exclusive,
                   ceil_mode=ceil_mode)


def adaptive_avg_pool1d(x, output_size: int, name=None):
    """Adaptive average pooling over the last dim of [N, C, L]."""
    if _run_time.computed(output_size):
        return _run_time.adaptive_avg_pool1d(x, output_size)
    out = _pool.resize2d(_shape.unsqueeze(x, 2), "adaptive_avg", [1, output_size])
    return _shape.squeeze(out, 2)


def adaptive_max_pool2d(x, output_size, return_mask: bool = False, name=None):
    """Max over the bins of `adaptive_avg_pool2d`; `return_mask` also returns the flat H*W
    index of each maximum.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.adaptive_max_pool2d(rt.ones([1, 2, 5, 5]), 2).shape
    [1, 2, 2, 2]
    """
    size = _output_size_2d("adaptive_max_pool2d", output_size)
    if _run_time.computed(size):
        out, mask = _run_time.max_pool2d(x, _kept(size, x), None, None, adaptive=True)
    else:
        out, mask = _pool.adaptive_max_pool2d(x, size)
    return (out, mask) if return_mask else out


def adaptive_max_pool1d(x, output_size: int, return_mask: bool = False, name=None):
    """Max over the bins of `adaptive_avg_pool1d` on [N, C, L]; `return_mask` also returns
    the index along L of each maximum.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.adaptive_max_pool1d(rt.to_tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    size = output_size if isinstance(output_size, int) else next(iter(output_size))
    out = adaptive_max_pool2d(_shape.unsqueeze(x, 2), [1, size], return_mask)
    if return_mask:
        return _shape.squeeze(out[0], 2), _shape.squeeze(out[1], 2)
    return _shape.squeeze(out, 2)
