"""Builtins over a list of Python numbers of several types that the program grows (a tensor
array of `[value, kind]` pairs, `runtime/ops/array_number_kinds.py`): `sum()` by the running
interpreter's rule, each item's type known; `max()` / `min()` giving the item of its own type.
"""
from __future__ import annotations

import runtime as rt
from runtime.ops.arrays import array_pack
from runtime.program.debug_ops import raise_error

from .exceptions import short_name
from .float_sum import graph_float_sum
from .variables import user_origin


def pairs_sum(array, start):
    """`sum(items, start)` of a list of Python numbers of several types that the program grows
    (a tensor array of `[value, kind]` pairs, `runtime/ops/array_number_kinds.py`), as the
    running interpreter adds them: the ints exactly (up to 2**53), the floats by its rule. A
    float where the start or an item is one, else an int (bools add as ints)."""
    kinds = array_pack(array)[:, 1]
    out = graph_float_sum(array, start)
    out.python_scalar = True
    if type(start) is not float:
        out.float_when = rt.any(kinds == 1.0)
    return out


def pairs_extreme(name: str, arr):
    """`max(items)` / `min(items)` of a list of Python numbers of several types (`[value,
    kind]` pairs): the first largest / smallest item, of its own type, as Python's; empty:
    Python's ValueError when the program runs."""
    src = user_origin()

    def position():
        return getattr(rt, "arg" + name)(array_pack(arr)[:, 0])

    def empty():
        raise_error(ValueError(f"{name}() arg is an empty sequence"),
                    at=f"{short_name(src.filename)}:{src.lineno}" if src else "")
        return rt.zeros([], "int64")  # never read: the op above raises

    return rt.static.array_read(arr, rt.static.nn.cond(
        rt.static.array_length(arr) > 0, position, empty))
