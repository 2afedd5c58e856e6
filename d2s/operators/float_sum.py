"""`sum()` of a list of Python floats that the program grows (a tensor array marked as holding
Python numbers), computed as the running interpreter's `sum` computes it, so the result is
eager's to the last bit.

Python 3.11 and earlier add the items one by one from `start`. Python 3.12 and later
(CPython's `builtin_sum_impl`) keep a running compensation for the bits each addition loses
(Neumaier's improvement of Kahan summation) once the running total is a float:

- an int `start` is added to the first item plainly (`start + x`, as `int + float`); a float
  `start` begins the compensated loop itself;
- each float item `x`: `t = total + x`; the compensation gains `(total - t) + x` when
  `|total| >= |x|`, else `(x - t) + total`; then `total = t`;
- at the end the compensation is added only when it is nonzero (so `-0.0` keeps its sign)
  and finite (so an infinite or overflowed total does not become nan).

CPython sums the ints before the first float exactly and adds an int met after it without
compensation; the program's array holds such ints as floats and cannot tell them apart, so
for a list holding ints beside floats (`Variable.mixed_numbers`) on 3.12 and later the result
can differ from eager's in the last bit (docs/d2s.md, "Not yet the same").

>>> python_float_sum([1e16, 1.0, -1e16], 0.0, compensated=True)
1.0
>>> python_float_sum([1e16, 1.0, -1e16], 0.0, compensated=False)
0.0
"""
from __future__ import annotations

import math
import sys

import runtime as rt

COMPENSATED = sys.version_info >= (3, 12)  # the running interpreter's rule (see the module)


def python_float_sum(items, start, compensated: bool = COMPENSATED) -> float:
    """The rule in plain Python, for floats `items` and an int or float `start` (what the
    graph version computes; the tests hold it against the built-in `sum`)."""
    if not compensated:
        total = start
        for x in items:
            total = total + x
        return total
    items = list(items)
    if not items:
        return start
    total, rest = (start + items[0], items[1:]) if type(start) is int else (start, items)
    lost = 0.0
    for x in rest:
        t = total + x
        lost += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    return total + lost if lost and math.isfinite(lost) else total


def graph_float_sum(array, start):
    """`python_float_sum` of the items of a non-empty tensor array of floats, as graph ops in
    the array's dtype: a cumulative sum from `start`, or the compensated loop as a `while`
    op (one trip per item)."""
    dtype = array.dtype
    if not COMPENSATED:
        items = rt.concat([rt.full([1], start, dtype), rt.static.array_stack(array)])
        return rt.cumsum(items)[-1]
    if type(start) is int:  # (`start + first item`, plainly: CPython's int path)
        first = rt.full([], start, dtype) + rt.static.array_read(array, 0)
        state = [rt.full([], 1, "int64"), first, rt.zeros([], dtype)]
    else:
        state = [rt.zeros([], "int64"), rt.full([], start, dtype), rt.zeros([], dtype)]
    n = rt.static.array_length(array)

    def more(i, total, lost):
        return i < n

    def add(i, total, lost):
        x = rt.static.array_read(array, i)
        t = total + x
        gained = rt.where(rt.abs(total) >= rt.abs(x), (total - t) + x, (x - t) + total)
        return [i + 1, t, lost + gained]

    _, total, lost = rt.static.nn.while_loop(more, add, state)
    keep = rt.logical_and(lost != 0, rt.isfinite(lost))
    return rt.where(keep, total + lost, total)
