"""`seq[a:a + b]` of a Python list of numbers, with bounds the converted program computes
(`int(x[0])`): eager's slice is a list whose length the values decide. The program slices
the list held as a constant tensor with the computed bounds (Python's clamping and negative
indices, as a tensor slice has them) and gives a tensor array of the numbers
(`runtime.ops.array_split.number_list`), so `len`, `sum`, iteration, indexing and a returned
list follow the run, each item of the list's Python type.

    window = seq[a:a + b]   ->   window = _d2s.slice_(seq, a, a + b, None)
                                                        (`converters.builtin_calls`)

Anything else, and a slice of a list of other values (tensors, strs, numbers of several
types), is Python's `seq[a:b:c]`, which refuses a computed bound as before.
"""
from __future__ import annotations

import numpy as np

import runtime as rt
from runtime.ops.array_split import number_list

from .variables import is_variable

# the Python type of every item -> the dtype the program holds it in
_DTYPES = {bool: "bool", int: "int64", float: "float64"}


def slice_(seq, lower, upper, step):
    """`seq[lower:upper:step]` (see the module)."""
    kinds = {type(v) for v in seq} if type(seq) is list else ()
    computed = [b for b in (lower, upper) if is_variable(b)]
    if len(kinds) != 1 or not kinds <= set(_DTYPES) or is_variable(step) or not computed or \
            any(b.dtype.kind not in "iu" or b.shape for b in computed):
        return seq[lower:upper:step]  # (Python's: a float bound is its TypeError)
    values = rt.to_tensor(np.array(seq, _DTYPES[kinds.pop()]))
    return number_list(values[lower:upper:step])
