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
    name = getattr(f, "__name__", None)
    graph = FUNCTIONS.get(name)
    if graph is None and name not in TWO or getattr(math, name, None) is not f:
        return f

    def call(*args, **kwargs):
        if name in TWO or name == "log" and len(args) == 2:
            if not any(map(is_variable, list(args) + list(kwargs.values()))):
                return f(*args, **kwargs)
            return _two(name, f, args, kwargs)
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


# ---- functions of two numbers ----------------------------------------------------------------
TWO = frozenset(("isclose", "hypot", "atan2", "fmod"))


def _two(name: str, f, args, kwargs):
    """`math.isclose(a, b, rel_tol=, abs_tol=)`, `math.hypot(a, b)`, `math.atan2(y, x)`,
    `math.fmod(a, b)` and `math.log(v, base)` of numbers some of which the program computes: Python's result (a
    bool, a float) as graph ops of float64 values standing for Python numbers."""
    import inspect

    try:  # (Python's TypeError for wrong arguments, while converting: the signature)
        bound = inspect.signature(_SIGNATURES[name]).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}() {e}") from None
    values = bound.arguments
    a, b = _number(values["a"]), _number(values["b"])
    if name == "isclose":
        rel, tol = (values.get(k, d) for k, d in (("rel_tol", 1e-09), ("abs_tol", 0.0)))
        if is_variable(rel) or is_variable(tol) or rel < 0 or tol < 0:
            return f(*args, **kwargs)  # (Python's own error: "tolerances must be ...")
        diff = rt.abs(a - b)
        bound_ = rt.maximum(rel * rt.maximum(rt.abs(a), rt.abs(b)), _number(tol))
        return rt.logical_or(a == b, rt.logical_and(rt.isfinite(diff), diff <= bound_))
    if name == "hypot":  # (where the squares overflow: scaled by the larger one)
        plain = rt.sqrt(a * a + b * b)
        big = rt.maximum(rt.abs(a), rt.abs(b))
        safe = rt.where(big == 0, 1.0, big)
        scaled = big * rt.sqrt((a / safe) * (a / safe) + (b / safe) * (b / safe))
        return rt.where(rt.isinf(plain), scaled, plain)
    if name == "atan2":
        return rt.atan2(a, b)
    if name == "fmod":  # (C's fmod: the sign of `a`; from the floored remainder, exactly)
        _raise_where(rt.logical_or(b == 0, rt.isinf(a)), ValueError("math domain error"),
                     user_origin())
        rem = rt.remainder(a, rt.where(b == 0, 1.0, b))
        rem = rt.where(rt.logical_and(rem != 0, (rem < 0) != (a < 0)), rem - b, rem)
        return rt.where(rem == 0, a * 0.0, rem)  # (a zero takes the sign of `a`, as C's)
    src = user_origin()  # log(v, base)
    _raise_where(rt.logical_or(a <= 0, b <= 0), ValueError("math domain error"), src)
    _raise_where(b == 1, ZeroDivisionError("float division by zero"), src)
    return rt.log(a) / rt.log(b)


def _number(v):
    """A float64 value standing for the Python float `float(v)`."""
    if is_variable(v):
        return float_(v)
    out = rt.full([], float(v), "float64")
    out.python_scalar = True
    return out


def _isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0): ...
def _hypot(a, b): ...
def _atan2(a, b): ...
def _log(a, b): ...
def _fmod(a, b): ...


_SIGNATURES = {"isclose": _isclose, "hypot": _hypot, "atan2": _atan2, "log": _log,
               "fmod": _fmod}
