"""3-D convolution and pooling over [N, C, D, H, W] ('NCDHW'; 'NDHWC' for channels last),
composed from the 2-D ops: each depth tap is one 2-D convolution (or pooling) over all output
depths at once (depth folded into the batch), and the taps are summed (or maxed). Gradients
and static programs come from the 2-D ops. The depth (dim 2) must be known when a program
is built; batch, height and width may be unknown. A pool whose kernel, stride or padding the
program computes (the counter of a graph loop) gathers its windows from tables built when the
program runs (`pooling_run_time`), any size unknown.
"""
from __future__ import annotations

import math

import numpy as np

from ... import core
from ...ops import combine as _combine
from ...ops import creation as _creation
from ...ops import math as _math
from ...ops import shape as _shape
from ...ops.registry import OpError
from ...tensor import to_tensor
from . import conv as _conv2
from . import pooling as _pool2
from . import pooling_run_time as _run_time


def _triple(v, what: str, op: str) -> list:
    if isinstance(v, int):
        return [v] * 3
    v = [int(d) for d in v]
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise OpError(f"{op}: {what} must be an int or 3 ints, got {v}")
    return v


def _pads(padding, op: str, sizes, kernel, stride, dilation) -> list:
    """[(front, back), (top, bottom), (left, right)] from Paddle's padding forms."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * 3
        if mode != "SAME":
            raise OpError(f"{op}: padding must be 'SAME', 'VALID', ints or pairs, got "
                          f"{padding!r}")
        if -1 in sizes:
            raise OpError(f"{op}: padding='SAME' needs the spatial sizes when the program is "
                          f"built, got {list(sizes)}")
        out = []
        for n, k, s, d in zip(sizes, kernel, stride, dilation):
            total = max((math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return out
    if isinstance(padding, int):
        return [(padding, padding)] * 3
    flat = list(padding)
    if len(flat) == 3 and all(isinstance(p, int) for p in flat):
        return [(p, p) for p in flat]
    if len(flat) == 6:
        return [(flat[0], flat[1]), (flat[2], flat[3]), (flat[4], flat[5])]
    if len(flat) == 5 and all(isinstance(p, (list, tuple)) for p in flat):  # per-dim pairs
        return [tuple(p) for p in flat[2:]]
    raise OpError(f"{op}: padding must be an int, 3 ints, 6 ints or 'SAME'/'VALID', got "
                  f"{padding!r}")


def _to_ncdhw(x, data_format: str, op: str):
    if data_format not in ("NCDHW", "NDHWC"):
        raise OpError(f"{op}: data_format must be 'NCDHW' or 'NDHWC', got {data_format!r}")
    if len(x.shape) != 5:
        raise OpError(f"{op}: x must be 5-D [N, C, D, H, W], got shape {list(x.shape)}")
    return _shape.transpose(x, [0, 4, 1, 2, 3]) if data_format == "NDHWC" else x


def _from_ncdhw(y, data_format: str):
    return _shape.transpose(y, [0, 2, 3, 4, 1]) if data_format == "NDHWC" else y


def _pad_depth(x, front: int, back: int, value: float):
    if not front and not back:
        return x
    edge = _creation.full_like(x[:, :, :1], value)
    return _combine.concat([edge] * front + [x] + [edge] * back, axis=2)


def _depth_out(op, depth, pads, k, s, d, ceil_mode=False):
    if depth == -1:
        raise OpError(f"{op}: the depth (dim 2 of x) must be known when the program is built")
    span = depth + pads[0] + pads[1] - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if out <= 0:
        raise OpError(f"{op}: the output depth would be {out} (depth {depth}, kernel {k}, "
                      f"padding {list(pads)})")
    return out


def _fold(xs):
    """[N, C, Do, H, W] -> [N * Do, C, H, W]."""
    return _shape.flatten(_shape.transpose(xs, [0, 2, 1, 3, 4]), 0, 1)


def _unfold(y, depth_out: int):
    """[N * Do, C, H, W] -> [N, C, Do, H, W]."""
    dims = list(y.shape[1:])
    if -1 in dims:
        s = _shape.shape(y)
        dims = [dims[0], s[2], s[3]]
    return _shape.transpose(_shape.reshape(y, [-1, depth_out] + dims), [0, 2, 1, 3, 4])


def _taps(x, k, s, d, depth_out):
    """The depth slices each kernel tap sees: k tensors [N, C, Do, H, W]."""
    return [x[:, :, i * d: i * d + s * (depth_out - 1) + 1: s] for i in range(k)]


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1,
           data_format: str = "NCDHW", name=None):
    """3-D convolution; weight is [out_channels, in_channels / groups, kd, kh, kw].

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.conv3d(rt.ones([1, 2, 4, 5, 5]), rt.ones([3, 2, 3, 3, 3]), padding=1).shape
    [1, 3, 4, 5, 5]
    """
    op = "conv3d"
    x = _to_ncdhw(x, data_format, op)
    if len(weight.shape) != 5:
        raise OpError(f"{op}: weight must be 5-D [out, in / groups, kd, kh, kw], got shape "
                      f"{list(weight.shape)}")
    kernel = list(weight.shape[2:])
    stride, dilation = _triple(stride, "stride", op), _triple(dilation, "dilation", op)
    pads = _pads(padding, op, x.shape[2:], kernel, stride, dilation)
    depth_out = _depth_out(op, x.shape[2], pads[0], kernel[0], stride[0], dilation[0])
    x = _pad_depth(x, *pads[0], 0.0)
    hw_pad = [pads[1][0], pads[1][1], pads[2][0], pads[2][1]]
    total = None
    for i, xs in enumerate(_taps(x, kernel[0], stride[0], dilation[0], depth_out)):
        y = _conv2.conv2d(_fold(xs), weight[:, :, i], stride=stride[1:], padding=hw_pad,
                          dilation=dilation[1:], groups=groups)
        total = y if total is None else _math.add(total, y)
    out = _unfold(total, depth_out)
    if bias is not None:
        out = _math.add(out, _shape.reshape(bias, [1, -1, 1, 1, 1]))
    return _from_ncdhw(out, data_format)


def _pool_args(op, x, kernel_size, stride, padding, ceil_mode, data_format):
    if ceil_mode:
        raise NotImplementedError(f"{op}: ceil_mode=True is not provided for 3-D pooling")
    x = _to_ncdhw(x, data_format, op)
    kernel = _triple(kernel_size, "kernel_size", op)
    stride = kernel if stride is None else _triple(stride, "stride", op)
    pads = _pads(padding, op, x.shape[2:], kernel, stride, [1, 1, 1])
    depth_out = _depth_out(op, x.shape[2], pads[0], kernel[0], stride[0], 1)
    return x, kernel, stride, pads, depth_out


def _kept_triple(v) -> list:
    """Three sizes from an int or 1 or 3 values, where values the program computes (the
    counter of a graph loop) stay as they are."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 3 if len(v) == 1 else v


def _kept_pads(padding, op: str):
    """[front, back, top, bottom, left, right] (or 'SAME' / 'VALID') from Paddle's padding
    forms, where values the program computes stay as they are."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise OpError(f"{op}: padding must be 'SAME', 'VALID', ints or pairs, got "
                          f"{padding!r}")
        return padding.upper()
    flat = [padding] if isinstance(padding, (int, core.VariableBase)) else list(padding)
    if len(flat) == 5 and all(isinstance(p, (list, tuple)) for p in flat):  # per-dim pairs
        flat = [v for p in flat[2:] for v in p]
    if len(flat) in (1, 3):
        return [p for p in _kept_triple(flat) for _ in range(2)]
    if len(flat) == 6:
        return flat
    raise OpError(f"{op}: padding must be an int, 3 ints, 6 ints or 'SAME'/'VALID', got "
                  f"{len(flat)} values")


def _run_time_pool3d(op, x, kernel_size, stride, padding, data_format, exclusive=True):
    """A 3-D pool whose kernel, stride or padding the program computes: each axis's windows
    come from a table built when the program runs (`pooling_run_time`)."""
    x = _to_ncdhw(x, data_format, op)
    kernel = _kept_triple(kernel_size)
    stride = kernel if stride is None else _kept_triple(stride)
    if len(kernel) != 3 or len(stride) != 3:
        raise OpError(f"{op}: kernel_size and stride must be an int or 3 values, got "
                      f"{len(kernel)} and {len(stride)}")
    pads = _kept_pads(padding, op)
    if op == "max_pool3d":
        return _from_ncdhw(_run_time.max_pool(x, kernel, stride, pads, op), data_format)
    out = _run_time.avg_pool(x, kernel, stride, pads, exclusive=exclusive, op=op)
    return _from_ncdhw(out, data_format)


def max_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               return_mask: bool = False, data_format: str = "NCDHW", name=None):
    """Max over each [kd, kh, kw] window (`stride` defaults to `kernel_size`).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.max_pool3d(rt.ones([1, 1, 4, 4, 4]), 2).shape
    [1, 1, 2, 2, 2]
    """
    if return_mask:
        raise NotImplementedError("max_pool3d: return_mask=True is not provided")
    if _run_time.computed(kernel_size, stride, padding) and not ceil_mode:
        return _run_time_pool3d("max_pool3d", x, kernel_size, stride, padding, data_format)
    x, kernel, stride, pads, depth_out = _pool_args("max_pool3d", x, kernel_size, stride,
                                                    padding, ceil_mode, data_format)
    # depth padding: the lowest finite value (every window also holds a real slice, and the
    # 2-D pooling of an all -inf plane would have no maximum to route a gradient to)
    x = _pad_depth(x, *pads[0], float(np.finfo(x.dtype.np).min))
    hw_pad = [pads[1][0], pads[1][1], pads[2][0], pads[2][1]]
    best = None
    for xs in _taps(x, kernel[0], stride[0], 1, depth_out):
        y = _pool2.max_pool2d(_fold(xs), kernel[1:], stride[1:], hw_pad)
        best = y if best is None else _math.maximum(best, y)
    return _from_ncdhw(_unfold(best, depth_out), data_format)


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override=None, data_format: str = "NCDHW",
               name=None):
    """Mean over each [kd, kh, kw] window; with `exclusive` (default) padding is not
    counted.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.avg_pool3d(rt.ones([1, 1, 4, 4, 4]), 2, padding=1).shape
    [1, 1, 3, 3, 3]
    """
    if divisor_override:
        raise NotImplementedError("avg_pool3d: divisor_override is not provided")
    if _run_time.computed(kernel_size, stride, padding) and not ceil_mode:
        return _run_time_pool3d("avg_pool3d", x, kernel_size, stride, padding, data_format,
                                exclusive)
    x, kernel, stride, pads, depth_out = _pool_args("avg_pool3d", x, kernel_size, stride,
                                                    padding, ceil_mode, data_format)
    depth = x.shape[2]
    x = _pad_depth(x, *pads[0], 0.0)
    hw_pad = [pads[1][0], pads[1][1], pads[2][0], pads[2][1]]
    total = None
    for xs in _taps(x, kernel[0], stride[0], 1, depth_out):
        y = _pool2.avg_pool2d(_fold(xs), kernel[1:], stride[1:], hw_pad, exclusive=exclusive)
        total = y if total is None else _math.add(total, y)
    out = _unfold(total, depth_out)
    if exclusive:  # the valid depth taps of each output depth (a product window)
        starts = np.arange(depth_out) * stride[0] - pads[0][0]
        count = np.minimum(starts + kernel[0], depth) - np.maximum(starts, 0)
        count = to_tensor(count.reshape(1, 1, -1, 1, 1).astype(out.dtype.np))
        return _from_ncdhw(_math.divide(out, count), data_format)
    return _from_ncdhw(_math.scale(out, 1.0 / kernel[0]), data_format)


def _adaptive_size(op, x, output_size) -> list:
    """[d, h, w] from an int or 3 values; None keeps that dim of x."""
    size = _kept_triple(output_size)
    if len(size) != 3:
        raise OpError(f"{op}: output_size must be an int or 3 values, got {output_size}")
    dims = [d if d != -1 else _shape.shape(x)[2 + i] for i, d in enumerate(x.shape[2:])]
    return [dims[i] if s is None else s for i, s in enumerate(size)]


def adaptive_avg_pool3d(x, output_size, data_format: str = "NCDHW", name=None):
    """Average over bins that tile each of D, H, W evenly (bin i of an axis of size n covers
    [floor(i*n/o), ceil((i+1)*n/o))); None in output_size keeps that dim. The size may be a
    value the program computes (the counter of a graph loop).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.adaptive_avg_pool3d(rt.ones([1, 2, 5, 4, 3]), [2, None, 1]).shape
    [1, 2, 2, 4, 1]
    """
    op = "avg_pool3d"
    x = _to_ncdhw(x, data_format, "adaptive_" + op)
    out = _run_time.avg_pool(x, _adaptive_size("adaptive_" + op, x, output_size), None, None,
                             adaptive=True, op=op)
    return _from_ncdhw(out, data_format)


def adaptive_max_pool3d(x, output_size, return_mask: bool = False, name=None):
    """Max over the bins of `adaptive_avg_pool3d` (NCDHW).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.adaptive_max_pool3d(rt.ones([1, 2, 5, 4, 3]), 2).shape
    [1, 2, 2, 2, 2]
    """
    op = "adaptive_max_pool3d"
    if return_mask:
        raise NotImplementedError(f"{op}: return_mask=True is not provided")
    x = _to_ncdhw(x, "NCDHW", op)
    return _run_time.max_pool(x, _adaptive_size(op, x, output_size), None, None, op,
                              adaptive=True)


__all__ = ["adaptive_avg_pool3d", "adaptive_max_pool3d", "avg_pool3d", "conv3d", "max_pool3d"]
