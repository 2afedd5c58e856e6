"""Pools whose kernel size (or adaptive output size) is a value the program computes, such as
the counter of a loop over `range(n_tensor)` in converted code: `F.max_pool1d(x, i)`,
`F.avg_pool2d(x, [i, 2])`, `F.adaptive_avg_pool1d(x, i)`, or whose padding is one
(`F.avg_pool1d(x, 3, padding=i)`).

The output size is then known only when the program runs. Each axis's windows come from
`pool_window_index` (positions, -1 in the padding); the pool gathers them and reduces over
each window - the first maximum, or the sum over the window's count - so the gradient is that
of the gather, as the fixed-size ops' is. A 2-D pool pools W, then H: a window is the product
of one range per axis, so the max, the sum and the count of a window are those of its rows.
"""
from __future__ import annotations

from ... import core
from ...ops import creation as _creation
from ...ops import gather as _gather
from ...ops import logic as _logic
from ...ops import math as _math
from ...ops import reduce as _reduce
from ...ops import shape as _shape
from ...ops.nn_pool_windows import pool_window_index


def computed(*sizes) -> bool:
    """Whether a size argument holds a value the program computes (a static Variable)."""
    for s in sizes:
        if isinstance(s, core.VariableBase) or (
                isinstance(s, (list, tuple)) and any(isinstance(v, core.VariableBase)
                                                     for v in s)):
            return True
    return False


def _int_tensor(v):
    if core.is_tensor(v):
        return _math.cast(_shape.reshape(v, []), "int64")
    return _creation.full([], int(v), "int64")


def _windows(x, table, axis: int):
    """x's values at the table's positions: the axis becomes [O, K] (-1 reads position 0)."""
    flat = _shape.reshape(_math.clip(table, 0, None), [-1])
    picked = _gather.index_select(x, flat, axis=axis)
    after = [d if d != -1 else _shape.shape(x)[j]
             for j, d in enumerate(x.shape) if j > axis]
    return _shape.reshape(picked, [0] * axis + [-1, _shape.shape(table)[1]] + after)


def _spread(table, axis: int, rank: int):
    """The [O, K] table with rank + 1 dims, [O, K] at axis, axis + 1 (to broadcast against
    the gathered windows)."""
    tail = list(range(axis + 2, rank + 1))
    lead = _shape.unsqueeze(table, list(range(axis))) if axis else table
    return _shape.unsqueeze(lead, tail) if tail else lead


def _valid(table, axis: int, rank: int):
    """Where the table holds a position (not padding), spread as `_spread`."""
    return _spread(table >= 0, axis, rank)


def max_along(x, table, axis: int):
    """(the first maximum of each window, its position along axis)."""
    vals = _windows(x, table, axis)
    vals = _logic.where(_valid(table, axis, len(x.shape)), vals, float("-inf"))
    arg = _reduce.argmax(vals, axis=axis + 1, keepdim=True)
    out = _shape.squeeze(_gather.take_along_axis(vals, arg, axis + 1), axis + 1)
    rows = _shape.expand(_spread(table, axis, len(x.shape)), _shape.shape(vals))
    return out, _shape.squeeze(_gather.take_along_axis(rows, arg, axis + 1), axis + 1)


def sum_along(x, table, axis: int, exclusive: bool):
    """(each window's sum, its count: the positions it holds, or K when not exclusive)."""
    vals = _windows(x, table, axis)
    valid = _valid(table, axis, len(x.shape))
    total = _reduce.sum(_logic.where(valid, vals, 0.0), axis=axis + 1)
    if exclusive:
        count = _reduce.sum(_math.cast(valid, x.dtype), axis=axis + 1)
    else:
        count = _math.cast(_shape.shape(table)[1], x.dtype)
    return total, count


def _table(x, axis, op, size, stride=None, padding=(0, 0), ceil_mode=False, adaptive=False):
    size = _int_tensor(size)
    stride = size if stride is None else _int_tensor(stride)
    pads = None
    if computed(padding):  # (a padding computed by the program: an input of the table)
        pads, padding = [_int_tensor(p) for p in padding], (0, 0)
    return pool_window_index(x, size, stride, axis, op, padding, ceil_mode, adaptive, pads)


def _axis_padding(padding, axis: int):
    """One axis's (before, after) from [top, bottom, left, right] ([front, back, top, ...]
    of a 3-D pool), or 'SAME' / 'VALID'."""
    return padding if isinstance(padding, str) else tuple(padding[2 * axis - 4:2 * axis - 2])


def max_pool2d(x, kernel, stride, padding, ceil_mode=False, adaptive=False):
    """(out, the flat H*W index of each maximum) of NCHW x; `kernel` is the output size of
    an adaptive pool."""
    op = "adaptive_max_pool2d" if adaptive else "max_pool2d"
    tables = [_table(x, axis, op, kernel[axis - 2], None if adaptive else stride[axis - 2],
                     (0, 0) if adaptive else _axis_padding(padding, axis), ceil_mode, adaptive)
              for axis in (2, 3)]
    by_row, col = max_along(x, tables[1], 3)
    out, row = max_along(by_row, tables[0], 2)
    col = _gather.take_along_axis(col, row, 2)
    return out, row * _shape.shape(x)[3] + col


def max_pool1d(x, kernel, stride, padding, ceil_mode=False):
    """(out, the index of each maximum) of [N, C, L] x; padding is (before, after)."""
    return max_along(x, _table(x, 2, "max_pool1d", kernel, stride, padding, ceil_mode), 2)


def avg_pool1d(x, kernel, stride, padding, ceil_mode=False, exclusive=True):
    """Mean over each window of [N, C, L] x; padding is (before, after)."""
    total, count = sum_along(x, _table(x, 2, "avg_pool1d", kernel, stride, padding,
                                       ceil_mode), 2, exclusive)
    return total / count


def adaptive_avg_pool1d(x, size):
    """Mean over each adaptive bin of [N, C, L] x."""
    total, count = sum_along(x, _table(x, 2, "adaptive_avg_pool1d", size, adaptive=True), 2,
                             True)
    return total / count


def max_pool(x, kernel, stride, padding, op: str, adaptive: bool = False):
    """Max over each window of NCHW or NCDHW x (`padding`: two entries per spatial axis, or
    'SAME' / 'VALID'): each axis in turn, the last first; `kernel` is the output size of an
    adaptive pool."""
    for axis in range(len(x.shape) - 1, 1, -1):
        if adaptive:
            t = _table(x, axis, op, kernel[axis - 2], adaptive=True)
        else:
            t = _table(x, axis, op, kernel[axis - 2], stride[axis - 2],
                       _axis_padding(padding, axis))
        x, _ = max_along(x, t, axis)
    return x


def avg_pool(x, kernel, stride, padding, ceil_mode=False, exclusive=True, divisor=None,
             adaptive=False, op="avg_pool2d"):
    """Mean over each window of NCHW or NCDHW x (`divisor` replaces the count); `kernel` is
    the output size of an adaptive pool."""
    op = "adaptive_" + op if adaptive else op
    total, count = x, 1.0
    for axis in range(len(x.shape) - 1, 1, -1):
        t = _table(x, axis, op, kernel[axis - 2], None if adaptive else stride[axis - 2],
                   (0, 0) if adaptive else _axis_padding(padding, axis), ceil_mode, adaptive)
        total, n = sum_along(total, t, axis, exclusive or adaptive)
        count = count * n
    return total / (float(divisor) if divisor else count)
