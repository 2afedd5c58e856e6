"""`math.sqrt(v)` and the other one-argument `math` functions below, where `v` is a value the
converted program computes (the counter of a loop over `range(n_tensor)`, `float(t)` of a
tensor): eager code gets a Python float (`floor` / `ceil`: an int). The program computes it
from `float(v)` (a float64 standing for that Python number, `Variable.python_scalar`: with a
tensor it takes the tensor's dtype, as a Python float does), with no gradient path (a Python
number has none). Where Python raises (`math.sqrt(-1)`: `ValueError: math domain error`,
`math.exp(1000)`: `OverflowError: math range error`), the program raises the same error when
it runs, at the user's line.

    math.sqrt(i)   ->   _d2s.math_(math.sqrt)(i)      (`converters.builtin_calls`)

On Python values it is the `math` function itself.
"""
from __future__ import annotations

import math

import runtime as rt
from runtime.program.debug_ops import raise_error

from .builtins import float_, int_
from .exceptions import short_name
from .variables import is_variable, user_origin

_DOMAIN = (ValueError, "math domain error")
_RANGE = (OverflowError, "math range error")
_NAN = (ValueError, "cannot convert float NaN to integer")
_INFINITE = (OverflowError, "cannot convert float infinity to integer")


# the largest float whose exp() is finite (`math.log(sys.float_info.max)`): the next one and
# up, not infinity, overflow (`math.exp(inf)` is inf)
_EXP_MAX = 709.782712893384


def _overflows(v):
    return rt.logical_and(v > _EXP_MAX, rt.isfinite(v))


# name -> (the graph function of a float64 value, [(when it is an error, the error)])
FUNCTIONS = {
    "sqrt": (rt.sqrt, [(lambda v: v < 0, _DOMAIN)]),
    "exp": (rt.exp, [(_overflows, _RANGE)]),
    "log": (rt.log, [(lambda v: v <= 0, _DOMAIN)]),
    "sin": (rt.sin, [(rt.isinf, _DOMAIN)]),
    "cos": (rt.cos, [(rt.isinf, _DOMAIN)]),
    "tanh": (rt.tanh, []),
    "fabs": (rt.abs, []),
    "floor": (rt.floor, [(rt.isnan, _NAN), (rt.isinf, _INFINITE)]),
    "ceil": (rt.ceil, [(rt.isnan, _NAN), (rt.isinf, _INFINITE)]),
    "log2": (rt.log2, [(lambda v: v <= 0, _DOMAIN)]),
    "log10": (rt.log10, [(lambda v: v <= 0, _DOMAIN)]),
    "isfinite": (rt.isfinite, []),  # (a bool: `if not math.isfinite(loss.item()):`)
    "isnan": (rt.isnan, []),
    "isinf": (rt.isinf, []),
}
_TO_INT = ("floor", "ceil")


def math_(f):
    """The callable converted code calls for the `math` function `f` (see the module)."""
    graph = FUNCTIONS.get(getattr(f, "__name__", None))
    if graph is None or getattr(math, f.__name__, None) is not f:
        return f

    def call(*args, **kwargs):
        if len(args) != 1 or kwargs or not is_variable(args[0]):
            return f(*args, **kwargs)
        fn, errors = graph
        if f.__name__ in _TO_INT and args[0].dtype.kind in "iub":
            return int_(args[0])  # (an int is its own floor, exactly)
        value = float_(args[0])
        src = user_origin()
        for bad, (cls, message) in errors:
            _raise_where(bad(value), cls(message), src)
        out = fn(value)
        return int_(out) if f.__name__ in _TO_INT else out
    return call


def _raise_where(bad, exc: BaseException, src) -> None:
    """A raise op of `exc` (at the user's line) that runs where the bool `bad` holds."""
    at = f"{short_name(src.filename)}:{src.lineno}" if src else ""

    def refused():
        raise_error(exc, at=at)

    rt.static.nn.cond(bad, refused, lambda: None)
