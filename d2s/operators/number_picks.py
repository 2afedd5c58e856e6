"""Results of `max`, `min`, `any` and `all` that eager code gets as Python numbers.

Eager `any(...)` / `all(...)` return a Python bool whatever the items are, and `max` / `min`
of Python numbers return the item that wins, with its own Python type (`max(1, int(t))` is
an int, `max(0.5, int(t))` the float 0.5 or an int). Where some of those numbers are computed
by the program (`int(t)`, `float(x.max())`), the result is a graph value standing for the
Python number (`Variable.python_scalar`), so the call returns eager's type.
"""
from __future__ import annotations

import builtins

import runtime as rt

from .control_flow import ifexp
from .variables import is_variable


def python_bool(b):
    """`any`/`all`'s result: a graph value standing for a Python bool (a copy where it is an
    item itself, which stays what it was)."""
    if is_variable(b) and not b.python_scalar:
        b = rt.assign(b)
        b.python_scalar = True
    return b


def number_extreme(py, op: str, values: list):
    """`py` (`max` / `min`) of Python numbers and values standing for them. Of one type (ints,
    floats) the elementwise `op`; of several (`max(0.5, int(t))`) or of bools the item a run
    picks by Python's rule (the first among ties), each keeping its type."""
    kinds = {_kind(v) for v in values}
    out = values[0]
    for v in values[1:]:
        if not is_variable(out) and not is_variable(v):
            out = py(out, v)
        elif builtins.len(kinds) == 1 and kinds != {"bool"}:
            ref = out if is_variable(out) else v
            out = getattr(rt, op)(as_tensor_like(out, ref), as_tensor_like(v, ref))
            out.python_scalar = True
        else:
            wins = v > out if py is builtins.max else v < out
            out = ifexp(wins, lambda v=v: v, lambda out=out: out)
    return out


def as_tensor_like(x, like):
    """`x`, a graph value or a Python number (as a 0-d tensor of `like`'s dtype)."""
    return x if is_variable(x) else rt.full([], x, like.dtype)


def _kind(v) -> str:
    """The Python type of a number, or of the number a graph value stands for."""
    if not is_variable(v):
        return type(v).__name__
    return "bool" if v.dtype == rt.bool else "float" if v.dtype.is_floating else "int"
