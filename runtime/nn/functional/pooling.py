"""`F.max_pool2d`, `F.avg_pool2d`, `F.adaptive_avg_pool2d` with Paddle's signatures."""
from __future__ import annotations

from ...ops import nn_pool as _pool
from ...ops.registry import OpError
from .conv import from_nchw, padding4, pair, to_nchw


def _window(op, kernel_size, stride, padding):
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
    out, mask = _pool.max_pool2d(to_nchw(x, data_format, "max_pool2d"), kernel, stride,
                                 padding, ceil_mode)
    out = from_nchw(out, data_format)
    return (out, from_nchw(mask, data_format)) if return_mask else out


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
               name=None):
    """Mean over each window; with `exclusive` (default) padding is not counted."""
    kernel, stride, padding = _window("avg_pool2d", kernel_size, stride, padding)
    x = to_nchw(x, data_format, "avg_pool2d")
    if divisor_override:
        out = _pool.avg_pool2d(x, kernel, stride, padding, ceil_mode, exclusive=False)
        out = out * (kernel[0] * kernel[1] / divisor_override)
    else:
        out = _pool.avg_pool2d(x, kernel, stride, padding, ceil_mode, exclusive)
    return from_nchw(out, data_format)


def adaptive_avg_pool2d(x, output_size, data_format: str = "NCHW", name=None):
    """Average over bins that tile the input evenly (bin i covers [floor(i*H/h),
    ceil((i+1)*H/h))); None in output_size keeps that dim.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.adaptive_avg_pool2d(rt.ones([2, 3, 7, 7]), 1).shape
    [2, 3, 1, 1]
    """
    size = [output_size, output_size] if output_size is None or isinstance(
        output_size, int) else list(output_size)
    if len(size) != 2:
        raise OpError(f"adaptive_avg_pool2d: output_size must be an int or 2 values, got "
                      f"{output_size}")
    out = _pool.resize2d(to_nchw(x, data_format, "adaptive_avg_pool2d"), "adaptive_avg", size)
    return from_nchw(out, data_format)
