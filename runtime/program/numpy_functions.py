"""NumPy's functions of what `x.numpy()` gives while a program is built: `np.exp(a)`,
`np.maximum(a, 0)`, `np.where(a > 0, a, 0)`, `np.concatenate([a, b])`, `np.round(a)`.

Eager `a = x.numpy()` is an array and NumPy computes on it; while a program is built `a` is a
Variable flagged `numpy_array` (`numpy_values`). NumPy hands a call with such an operand to
`Variable.__array_ufunc__` / `__array_function__` (NEP 13 / 18), which build the graph op
with NumPy's result dtype (a ufunc's loop, `ufunc.resolve_dtypes`, Python numbers weak as in
NEP 50: `np.exp` of int64 is float64, `np.maximum(a, 0)` of float32 float32) and flag the
result (a NumPy scalar where it is 0-d), so the call returns what eager code returns. A ufunc
that is an operator (`ndarray + v`, `np.add(a, b)`) is the Variable's operator, as before.
A function not below raises a TypeError naming it. A tensor operand (not taken out with
`numpy()`) is what eager's `Tensor.__array__` makes of it, `t.numpy()`: a ufunc computes on
that; a function first runs NumPy's own code, which may call the tensor's method and keep
its result (`np.squeeze(t)`: a tensor), until that code converts the tensor (`_of_tensors`).

>>> import numpy as np
>>> import runtime as rt
>>> with rt.static.program_guard(rt.static.Program()):
...     a = rt.static.data('y', [4], 'int64').numpy()
...     e, m = np.exp(a), np.maximum(a, 0.5)
>>> e.dtype.name, e.numpy_array, m.dtype.name
('float64', True, 'float64')
"""
from __future__ import annotations

import threading

import numpy as np

from ..core import is_variable
from ..ops.combine import concat, stack
from ..ops.compositions import log2, log10
from ..ops.counting import BINCOUNT, bincount
from ..ops.gather import argsort, sort
from ..ops.logic import isfinite, isinf, isnan, logical_and, logical_not, logical_or, where
from ..ops.math import (
    abs,
    assign,
    ceil,
    cos,
    exp,
    floor,
    log,
    log1p,
    maximum,
    minimum,
    remainder,
    sign,
    sin,
    sqrt,
    square,
    tanh,
)
from ..ops.registry import bind
from ..ops.shape import reshape, transpose
from ..ops.transcendental import expm1
from . import numpy_stats, numpy_values
from .numpy_values import as_dtype, mark, plain, stand_in


def _rint(x):
    """NumPy's rounding: halves to the even neighbour (the runtime's `round` takes them away
    from zero). `x - floor(x)` is exact, so no sum of `x` and 0.5 rounds first."""
    r = floor(x)
    d = x - r
    up = logical_or(d > 0.5, logical_and(d == 0.5, remainder(r, 2) != 0))
    return where(up, r + 1, r)


# ufunc -> the graph function computing it in its loop's dtype
_UFUNCS = {
    "exp": exp, "log": log, "log1p": log1p, "expm1": expm1, "sqrt": sqrt, "absolute": abs,
    "fabs": abs, "sign": sign, "floor": floor, "ceil": ceil, "rint": _rint, "square": square,
    "tanh": tanh, "sin": sin, "cos": cos, "log2": log2, "log10": log10, "maximum": maximum,
    "minimum": minimum, "isnan": isnan, "isinf": isinf, "isfinite": isfinite,
    "logical_and": logical_and, "logical_or": logical_or, "logical_not": logical_not,
}
# ufunc that is an operator -> (the operand's method, the method of a right operand)
_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"), "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"), "matmul": ("__matmul__", "__rmatmul__"),
    "bitwise_and": ("__and__", "__rand__"), "bitwise_or": ("__or__", "__ror__"),
    "bitwise_xor": ("__xor__", "__rxor__"), "left_shift": ("__lshift__", "__rlshift__"),
    "right_shift": ("__rshift__", "__rrshift__"), "equal": ("__eq__", "__eq__"),
    "not_equal": ("__ne__", "__ne__"), "less": ("__lt__", "__gt__"),
    "less_equal": ("__le__", "__ge__"), "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"), "negative": ("__neg__", None),
    "positive": ("__pos__", None), "invert": ("__invert__", None),
}


def _operator(name: str, inputs: tuple):
    method, reflected = _OPERATORS[name]
    if len(inputs) == 1:
        return getattr(inputs[0], method)()
    a, b = inputs
    own, other = (getattr(a, method, None), b) if is_variable(a) else (
        getattr(b, reflected, None), a)
    return NotImplemented if own is None else own(other)  # (NumPy then raises TypeError)


def _loop_key(x):
    """What `ufunc.resolve_dtypes` takes for `x`: a dtype, or a Python number's type (weak)."""
    if is_variable(x) and not x.numpy_array:  # (a Python number the program computes)
        return {"b": np.dtype(bool), "f": float}.get(x.dtype.kind, int)
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, (int, float)):
        return type(x)
    return np.asarray(x).dtype if not is_variable(x) else np.dtype(x.dtype.name)


def out_of_graph(x):
    """What eager NumPy computes on for `x`: a tensor becomes the array eager's `__array__`
    gives, `x.numpy()` (a graph value flagged as NumPy's); anything else stays as it is."""
    if not is_variable(x) or plain(x):
        return x
    if x.is_array and getattr(x, "row_lists", False):
        raise TypeError(
            "NumPy of `x.tolist()` of a tensor whose first dim only the run decides: NumPy's "
            "array of it is float64 of shape (0,) when it is empty, whatever `x` holds. Use "
            "`x.numpy()` (with `.astype(...)` for NumPy's dtype of the numbers)")
    if x.is_array:
        raise TypeError(
            f"NumPy of a list of tensors that the converted code grows ({x.type_str()}): "
            "its length is known only when the program runs. Stack it first "
            "(`rt.stack(items).numpy()`) or do it in NumPy on the returned values.")
    return x.numpy()


def _taken_out(v):
    if isinstance(v, (list, tuple)):
        return type(v)(_taken_out(x) for x in v)
    return out_of_graph(v)


class ArrayWanted(Exception):
    """NumPy's code converting a tensor of the program with `__array__` (`_of_tensors`)."""


_WANTED = threading.local()  # (`depth`: the `_of_tensors` calls running NumPy's code)


def array_of(self, dtype=None, copy=None):
    """`Variable.__array__`: the program has no array of a value while it is built."""
    if getattr(_WANTED, "depth", 0):
        raise ArrayWanted
    raise self._no_value("Converting to a NumPy array (np.asarray / np.array)")


def _of_tensors(func, args, kwargs):
    """NumPy's function of eager Tensors: NumPy's own code runs (it may call the Tensor's
    method of the same name and keep what it gives, as `np.squeeze(t)` does) until it
    converts a tensor with `__array__`; from there eager computes NumPy's function of the
    arrays, `t.numpy()`, which the program computes as NumPy does (below)."""
    _WANTED.depth = getattr(_WANTED, "depth", 0) + 1
    try:
        return func._implementation(*args, **kwargs)
    except ArrayWanted:
        pass
    finally:
        _WANTED.depth -= 1
    return func(*_taken_out(args), **{k: _taken_out(v) for k, v in kwargs.items()})


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """`Variable.__array_ufunc__`: see the module."""
    name = ufunc.__name__
    if kwargs.get("out") is None and not [k for k in kwargs if k != "out"] and \
            method == "__call__" and name in _OPERATORS:
        if is_variable(inputs[0]) and not plain(inputs[0]):  # (`np.add(t, 1)`: `t + 1`
            inputs = tuple(out_of_graph(x) for x in inputs)  # never calls the ufunc)
        return _operator(name, inputs)
    inputs = tuple(out_of_graph(x) for x in inputs)  # (eager: the Tensor's `__array__`)
    fn = _UFUNCS.get(name)
    if method != "__call__" or fn is None or kwargs:
        what = f"np.{name}" + ("" if method == "__call__" else f".{method}")
        given = f" with {', '.join(kwargs)}" if kwargs and fn is not None else ""
        raise TypeError(f"{what}(){given} of a NumPy array computed by the converted code "
                        "(from `.numpy()` or a tensor's `__array__`): the program computes "
                        "NumPy's ufuncs "
                        f"{', '.join(sorted(_UFUNCS))} and the operators. {_ADVICE}")
    with np.errstate(all="ignore"):
        loop = ufunc.resolve_dtypes(tuple(_loop_key(x) for x in inputs) + (None,))
    args = [as_dtype(x if is_variable(x) or not isinstance(x, (list, tuple)) else np.asarray(x),
                     dtype) for x, dtype in zip(inputs, loop)]
    return _flag(as_dtype(fn(*args), loop[-1]))


_ADVICE = ("Keep it a tensor: compute it with rt's function of the same name before "
           "`.numpy()`, or do it in NumPy on the value the converted function returns.")


def _flag(out):
    """`out` flagged as a NumPy value (a 0-d one: a NumPy scalar), not a Python number."""
    if out.python_scalar:
        out = assign(out)
        out.python_scalar = False
    return mark(out)


def _common(*values) -> np.dtype:
    return np.result_type(*[stand_in(v) for v in values if v is not None])


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError("np.where(condition) of a NumPy array computed by the converted code "
                        "gives a tuple of index arrays whose length only the run knows: "
                        f"give np.where three arguments. {_ADVICE}")
    dtype = _common(x, y)
    x, y = (np.asarray(v) if isinstance(v, (bool, int, float)) else v for v in (x, y))
    return _flag(where(as_dtype(condition, np.dtype(bool)), as_dtype(x, dtype),
                       as_dtype(y, dtype)))


def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    _no_out("clip", out)
    lo, hi = (min if a_min is None else a_min), (max if a_max is None else a_max)
    dtype = _common(a, lo, hi)
    got = as_dtype(a, dtype)
    if lo is not None:
        got = maximum(got, as_dtype(lo, dtype))
    if hi is not None:
        got = minimum(got, as_dtype(hi, dtype))
    return _flag(assign(got) if got is a else got)


def _round(a, decimals=0, out=None):
    _no_out("round", out)
    if a.dtype.kind in "iub" and decimals >= 0:  # (a copy, as NumPy's)
        return _flag(assign(a))
    if not decimals:
        return _flag(_rint(a))
    scale = 10.0 ** decimals
    return _flag(as_dtype(_rint(a * scale) / scale, np.dtype(a.dtype.name)))


def _ravel(a, order="C"):
    if order not in ("C", "A", "K"):
        raise TypeError(f"np.ravel(order={order!r}) of a NumPy array computed by the "
                        f"converted code: the program keeps NumPy's C order only. {_ADVICE}")
    return mark(reshape(a, [-1]), False)


def _transpose(a, axes=None):
    axes = list(range(len(a.shape)))[::-1] if axes is None else list(axes)
    return mark(transpose(a, axes), False)


def _joined(join, name: str):
    def call(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
        _no_out(name, out)
        arrays = list(arrays)
        want = np.dtype(dtype) if dtype is not None else _common(*arrays)
        items = [as_dtype(v if is_variable(v) else np.asarray(v), want) for v in arrays]
        if axis is None:
            items, axis = [reshape(v, [-1]) for v in items], 0
        return _flag(join(items, axis=axis))
    return call


def _sorting(fn, name: str):
    def call(a, axis=-1, kind=None, order=None, *, stable=None):
        if order is not None:
            raise TypeError(f"np.{name}() with order= of a NumPy array computed by the "
                            f"converted code: the program sorts numbers only. {_ADVICE}")
        if axis is None:
            a, axis = reshape(a, [-1]), 0
        if stable or kind in ("stable", "mergesort"):
            kind = "stable"
        return _flag(fn(a, axis=axis, kind=kind))  # (None: NumPy's default, as eagerly)
    return call


def _bincount(x, weights=None, minlength=0):
    """NumPy's counts: `max(x) + 1` of them, at least `minlength` (a length the run decides,
    as eagerly); a negative value raises ValueError when the program runs (the op's)."""
    if x.dtype.kind not in "iub" or x.dtype.name == "uint64":
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype.name}') to "
                        "dtype('int64') according to the rule 'safe'")
    if len(x.shape) != 1:
        raise ValueError("object too deep for desired array" if x.shape else
                         "object of too small depth for desired array")
    if isinstance(minlength, int) and minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if x.shape[0] == 0:  # (NumPy ignores the weights of no values: int64 counts)
        weights = None
    elif weights is not None:
        weights = as_dtype(weights if is_variable(weights) else np.asarray(weights),
                           np.dtype("float64"))
    x = as_dtype(x, np.dtype("int64"))
    if weights is None or x.shape[0] != -1:
        return mark(bincount(x, weights, minlength=minlength), False)
    # (a length only the run knows: empty, NumPy's counts are int64, which the run decides)
    if is_variable(minlength):
        return mark(bind(BINCOUNT, (x, weights, minlength), {"numpy_empty": True}), False)
    return mark(bind(BINCOUNT, (x, weights), {"minlength": int(minlength),
                                              "numpy_empty": True}), False)


def _no_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(f"np.{name}(..., out=...) into a NumPy array of a value the converted "
                        "code computes: the program makes a new array; assign the result")


# np.<function> -> its implementation on NumPy values of the program
_FUNCTIONS = {
    "where": _where, "clip": _clip, "round": _round, "around": _round,
    "concatenate": _joined(concat, "concatenate"), "stack": _joined(stack, "stack"),
    "sort": _sorting(sort, "sort"), "argsort": _sorting(argsort, "argsort"),
    "ravel": _ravel, "transpose": _transpose, "bincount": _bincount,
    **numpy_stats.FUNCTIONS,  # (unique, percentile, median, diag, np.linalg's: its table)
}
# NumPy's functions that call the array's method of the same name (`numpy_values`' methods)
FORWARDED = frozenset(("mean", "sum", "prod", "max", "min", "amax", "amin", "any", "all",
                        "std", "var", "argmax", "argmin", "reshape", "squeeze", "shape",
                        "ndim", "size"))


def _leaves(args, kwargs):
    for v in (*args, *kwargs.values()):
        if isinstance(v, (list, tuple)):
            yield from v
        else:
            yield v


def array_function(self, func, types, args, kwargs):
    """`Variable.__array_function__`: see the module. Without a NumPy value among the
    operands NumPy's own implementation runs, as it did before."""
    name = ("linalg." if func.__module__ == "numpy.linalg" else "") + func.__name__
    values = [v for v in _leaves(args, kwargs) if is_variable(v)]
    if not all(plain(v) for v in values):
        return _of_tensors(func, args, kwargs)
    if not any(v.numpy_array for v in values) or name in FORWARDED:
        return func._implementation(*args, **kwargs)
    fn = _FUNCTIONS.get(name)
    if fn is None:
        raise TypeError(
            f"np.{name}() of a NumPy array computed by the converted code (from `.numpy()` "
            "or a tensor's `__array__`): "
            "the program computes NumPy's reductions (np.mean, np.sum, np.argmax, ...), "
            f"{', '.join(f'np.{n}' for n in sorted(_FUNCTIONS))} and the ufuncs "
            f"(np.exp, np.maximum, ...). {_ADVICE}")
    return fn(*args, **kwargs)


def wrap(name: str, fn):
    """The Variable method `name` (`fn`, the Tensor table's): NumPy's for values from
    `numpy()` (`a.argsort()`, `a.clip(0, 1)`, `a.round()`, and `numpy_values`' names)."""
    if name in numpy_values.NAMES:
        return numpy_values.wrap(name, fn)
    own = _FUNCTIONS[name]

    def method(self, *args, **kwargs):
        return own(self, *args, **kwargs) if self.numpy_array else fn(self, *args, **kwargs)
    method.__name__, method.__doc__ = fn.__name__, fn.__doc__
    return method


NAMES = numpy_values.NAMES | {"argsort", "clip", "round"}
