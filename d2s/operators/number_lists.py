"""NumPy's reductions of a Python list of numbers the program computes (`clipfracs.append(
frac.item())`, then `np.mean(clipfracs)`, as RL and evaluation loops log statistics): eager
NumPy makes an array of the numbers (float64, or int64 / bool where none is a float) and gives
a NumPy scalar. NumPy hands a list to its own code (a list has no `__array_function__`), so
converted code calls `reduction(np.mean)` instead: the items stacked into a graph value of
NumPy's dtype, flagged as a NumPy array (`runtime.program.numpy_values`), reduced with NumPy's
result dtype. A list grown in a graph loop (a tensor array) reaches `numpy_values` itself.

    np.mean(fracs)   ->   _d2s.call(np.mean)(fracs)   (`operators.calls`)
"""
from __future__ import annotations

import numpy as np

import runtime as rt
from runtime.program.numpy_values import as_dtype, mark, reduce

from .variables import is_variable

_NAMES = {"mean": "mean", "sum": "sum", "std": "std", "var": "var", "max": "max",
          "min": "min", "amax": "max", "amin": "min", "prod": "prod"}
_REDUCTIONS = tuple(getattr(np, n) for n in _NAMES)


def is_reduction(f) -> bool:
    return any(f is r for r in _REDUCTIONS)  # (by identity: `f` may be unhashable)


def reduction(f):
    """`np.<f>` as converted code calls it (see the module)."""
    name = _NAMES[f.__name__]

    def call(a, axis=None, **kwargs):
        if type(a) in (list, tuple) and a and any(is_variable(v) for v in a) and all(
                _number(v) for v in a):
            return reduce(_as_array(a), name, axis=axis, **kwargs)
        return f(a, axis=axis, **kwargs)
    call.__name__ = f.__name__
    return call


def _number(v) -> bool:
    """A Python number, or a graph value standing for one of a type fixed for every run."""
    if type(v) in (bool, int, float):
        return True
    return is_variable(v) and getattr(v, "python_scalar", False) and not v.shape and not (
        v.numpy_array or v.is_array or v.number_when is not None or v.float_when is not None
        or v.bool_when is not None or getattr(v, "number_type_unknown", False))


def _kind(v) -> str:
    return ("b" if type(v) is bool else "f" if type(v) is float else "i") if not \
        is_variable(v) else "f" if v.dtype.kind == "f" else "b" if v.dtype.kind == "b" else "i"


def _as_array(items) -> object:
    """`np.asarray(items)` as a graph value: float64 where one is a float, else int64 where
    one is an int, else bool."""
    kinds = {_kind(v) for v in items}
    want = np.dtype("float64" if "f" in kinds else "int64" if "i" in kinds else "bool")
    return mark(rt.stack([as_dtype(v, want) if is_variable(v) else rt.full([], v, want.name)
                          for v in items]), False)
