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

CPython sums the ints before the first float exactly (an int `start` with them), and adds an
int met after it plainly, `total + float(v)`, leaving the compensation as it is. A list of
ints beside floats that the program grows holds each item's type beside it (`[value, kind]`
pairs, `runtime/ops/array_number_kinds.py`): its ints are added as CPython adds them, exactly.
An array that holds such ints as floats cannot tell an int 2 from a float 2.0; so for a list
that may hold ints beside floats that way (`Variable.mixed_numbers`) the program also notes
whether an item with an integral value lost bits when it was added (the compensation gained
something there, which an int would not add): then the result would depend on which items
were ints, and the program raises a TypeError naming the `sum()` line. Every other such sum
is eager's to the last bit: an int item that is added exactly changes the compensation
neither way.

>>> python_float_sum([1e16, 1.0, -1e16], 0.0, compensated=True)
1.0
>>> python_float_sum([1e16, 1.0, -1e16], 0.0, compensated=False)
0.0
"""
from __future__ import annotations

import math
import sys

import runtime as rt
from runtime.ops.array_number_kinds import holds_number_kinds
from runtime.ops.arrays import array_pack
from runtime.program.debug_ops import raise_error

COMPENSATED = sys.version_info >= (3, 12)  # the running interpreter's rule (see the module)


def python_float_sum(items, start, compensated: bool = COMPENSATED) -> float:
    """The rule in plain Python, for Python floats and ints (those a C long holds) `items`
    and an int or float `start` (what the graph version computes; the tests hold it against
    the built-in `sum`)."""
    if not compensated:
        total = start
        for x in items:
            total = total + x
        return total
    rest = iter(items)
    total = start
    if type(start) in (int, bool):  # exact ints, up to (and with) the first float
        for x in rest:
            total = total + x
            if type(x) is float:
                break
        else:
            return total
    lost = 0.0
    for x in rest:
        if type(x) is not float:  # an int: added plainly, no compensation
            total = total + float(x)
            continue
        t = total + x
        lost += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    return total + lost if lost and math.isfinite(lost) else total


def graph_float_sum(array, start, ints_at: tuple | None = None):
    """`python_float_sum` of the items of a non-empty tensor array of floats, as graph ops in
    the array's dtype: a cumulative sum from `start`, or the compensated loop as a `while`
    op (one trip per item). `ints_at` ((message, 'file.py:12')): the array may hold ints
    beside the floats, and the program raises that TypeError where the result would depend
    on which items were ints (see the module)."""
    dtype = array.dtype
    pairs = holds_number_kinds(array)  # (each item's type known: the ints added plainly)
    if not COMPENSATED:
        items = array_pack(array)[:, 0] if pairs else rt.static.array_stack(array)
        return rt.cumsum(rt.concat([rt.full([1], start, dtype), items]))[-1]
    n = rt.static.array_length(array)
    # `plain`: every item so far may have been an int, from an int start: CPython has added
    # them (and then the first float) without compensation
    state = [rt.zeros([], "int64"), rt.full([], start, dtype), rt.zeros([], dtype),
             rt.full([], type(start) is int, "bool"), rt.full([], False, "bool")]

    def more(i, total, lost, plain, doubt):
        return i < n

    def add(i, total, lost, plain, doubt):
        x = rt.static.array_read(array, i)
        t = total + x
        gained = rt.where(rt.abs(total) >= rt.abs(x), (total - t) + x, (x - t) + total)
        integral = rt.full([], False, "bool")
        if pairs:  # (an int, or a bool: added plainly, as CPython adds it)
            integral = rt.logical_not(x.float_when)
            gained = rt.where(integral, rt.zeros([], dtype), gained)
        elif ints_at is not None:  # (an int there, or before it, would change what is gained)
            integral = rt.logical_and(rt.isfinite(x), x == rt.floor(x))
            doubt = rt.logical_or(doubt, rt.logical_and(
                rt.logical_or(plain, integral),
                rt.logical_and(gained != 0, rt.isfinite(gained))))
        lost = lost + rt.where(plain, rt.zeros([], dtype), gained)
        return [i + 1, t, lost, rt.logical_and(plain, integral), doubt]

    _, total, lost, _, doubt = rt.static.nn.while_loop(more, add, state)
    if ints_at is not None:
        message, at = ints_at

        def refused():
            raise_error(TypeError(message), at=at)

        rt.static.nn.cond(doubt, refused, lambda: None)
    keep = rt.logical_and(lost != 0, rt.isfinite(lost))
    return rt.where(keep, total + lost, total)

