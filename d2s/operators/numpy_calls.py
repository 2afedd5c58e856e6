"""`np.asarray(t)`, `np.array(t)`, `np.float32(v)` of values the converted program computes:
NumPy's array or scalar of the value, as eager's `Tensor.__array__` gives it
(`runtime/program/numpy_arrays.py`).

    np.asarray(t)   ->   _d2s.numpy_(np.asarray)(t)      (`converters.builtin_calls`)

On Python values it is the NumPy call itself.
"""
from __future__ import annotations

import functools

from runtime.program.numpy_arrays import construct


def numpy_(f):
    """The callable converted code calls for NumPy's constructor or scalar type `f`."""
    return functools.partial(construct, f)
