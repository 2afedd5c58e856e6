"""NumPy's semantics for what `x.numpy()` gives while a program is built.

Eager `x.numpy()` is a NumPy array, and what user code computes from it is NumPy's: `y.numpy()
/ 2` of int64 labels is float64, `(pred.numpy() == y.numpy()).mean()` a `np.float64`, `a.std()`
the population deviation (ddof=0), `a[0]` and `a.sum()` NumPy scalars. While a program is built
`x.numpy()` is a Variable flagged `numpy_array` (it stays in the graph, as in Paddle's converted
code); the operators and NumPy's reduction methods on such a value follow NumPy here: the
result's dtype is the one NumPy gives for the operands' dtypes (found by running the NumPy
operation on one-element stand-ins), the op computes in it, and the result is flagged too
(`numpy_scalar` where NumPy gives a scalar: a 0-d result of an operator, an index or a
reduction), so the converted call returns what eager code returns (d2s/running.py).

An operand that is a tensor (not from `numpy()`) makes the operation the tensor's, as eagerly
(`ndarray + Tensor` is a Tensor: the Tensor's reflected operator runs).

>>> import runtime as rt
>>> with rt.static.program_guard(rt.static.Program()):
...     y = rt.static.data('y', [4], 'int64')
...     half = y.numpy() / 2
...     acc = (y.numpy() == 1).mean()
>>> half.dtype.name, half.numpy_array, acc.dtype.name, acc.numpy_scalar
('float64', True, 'float64', True)
"""
from __future__ import annotations

import operator

import numpy as np

from ..core import is_variable
from ..ops.math import assign

# operator method -> (NumPy operation, reflected)
_BINARY = {f"__{n}__": (getattr(operator, n if n not in ("and", "or") else n + "_"), False)
           for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or",
                     "xor")}
_BINARY.update({f"__r{n[2:]}": (fn, True) for n, (fn, _) in list(_BINARY.items())})
_COMPARE = {f"__{n}__": getattr(operator, n) for n in ("eq", "ne", "lt", "le", "gt", "ge")}
_UNARY = {"__neg__": operator.neg, "__abs__": operator.abs, "__invert__": operator.invert,
          "__pos__": operator.pos}
_REDUCTIONS = ("mean", "sum", "prod", "max", "min", "any", "all", "std", "var", "argmax",
               "argmin")
_SHAPES = ("reshape", "flatten", "squeeze", "T")  # (NumPy's results, the same call forms)
_OTHERS = ("sort", "nonzero")  # (NumPy's: in place / a tuple of index arrays: refused)
NAMES = frozenset(_BINARY) | frozenset(_COMPARE) | frozenset(_UNARY) | frozenset(
    _REDUCTIONS) | {"astype", "__getitem__"} | frozenset(_SHAPES) | frozenset(_OTHERS)


_REGULAR: dict = {}  # name -> the Tensor table's method (the wrapped one's own semantics)


def plain(x) -> bool:
    """A NumPy operand beside a value from `numpy()`: a number, a NumPy value, another value
    from `numpy()`, a Variable standing for a Python number."""
    if is_variable(x):
        return x.numpy_array or x.python_scalar
    return isinstance(x, (bool, int, float, np.ndarray, np.generic))


def _applies(self, other) -> bool:
    """NumPy's semantics: a value from `numpy()` with a NumPy operand, or a Python number
    (standing for one) with a value from `numpy()` or a NumPy constant (`total + a.sum()`,
    `loss.item() * np.float64(0.5)`: NumPy's scalar)."""
    if self.numpy_array:
        return plain(other)
    return self.python_scalar and (is_variable(other) and other.numpy_array or isinstance(
        other, (np.generic, np.ndarray)) and other.dtype.kind in "biuf")


def stand_in(x):
    """A one-element NumPy value of `x`'s kind, for NumPy to tell the result's dtype."""
    if is_variable(x):
        if x.python_scalar and not x.numpy_array:  # (a Python number: weak, as NumPy's)
            return {"b": True, "f": 1.0}.get(x.dtype.kind, 1)
        return np.ones((1,) * min(len(x.shape), 1), x.dtype.name)
    if isinstance(x, (np.ndarray, np.generic)):
        return np.ones((1,) * min(np.ndim(x), 1), x.dtype)
    return x


def as_dtype(x, dtype: np.dtype):
    if is_variable(x):
        return x if x.dtype.name == dtype.name else _REGULAR["astype"](x, dtype.name)
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x, dtype)
    return x


def mark(out, scalar=None):
    out.numpy_array = True
    out.numpy_scalar = (len(out.shape) == 0) if scalar is None else scalar
    return out


def _result_dtype(fn, *stand_ins) -> np.dtype:
    with np.errstate(all="ignore"):
        return np.asarray(fn(*stand_ins)).dtype


def _binary(name: str, regular):
    fn, reflected = _BINARY[name]

    def method(self, other):
        if not _applies(self, other):
            return regular(self, other)
        a, b = (other, self) if reflected else (self, other)
        dtype = _result_dtype(fn, stand_in(a), stand_in(b))
        return mark(as_dtype(regular(as_dtype(self, dtype), as_dtype(other, dtype)), dtype))
    return method


def _compare(name: str, regular):
    fn = _COMPARE[name]

    def method(self, other):
        if not _applies(self, other):
            return regular(self, other)
        common = np.result_type(stand_in(self), stand_in(other))
        return mark(regular(as_dtype(self, common), as_dtype(other, common)))
    method.__name__ = fn.__name__
    return method


def _unary(name: str, regular):
    def method(self):
        out = regular(self)
        return mark(out) if self.numpy_array else out
    return method


def _getitem(regular):
    def method(self, index):
        out = regular(self, index)
        return mark(out) if self.numpy_array and is_variable(out) else out
    return method


def _astype(regular):
    def method(self, dtype):
        if not self.numpy_array:
            return regular(self, dtype)
        out = regular(self, np.dtype(dtype).name)
        return mark(assign(self) if out is self else out, self.numpy_scalar)  # (a new array)
    return method


def _reshaping(regular):
    if isinstance(regular, property):  # (`a.T`)
        return property(lambda self: mark(regular.fget(self), False) if self.numpy_array
                        else regular.fget(self))

    def method(self, *args, **kwargs):
        if not self.numpy_array:
            return regular(self, *args, **kwargs)
        if regular.__name__ == "reshape" and args and all(isinstance(a, int) for a in args):
            args = (list(args),)  # (NumPy's `a.reshape(3, 2)`)
        if kwargs.get("order", "C") in ("C", "A") and kwargs.get("copy") is None:
            kwargs = {k: v for k, v in kwargs.items() if k not in ("order", "copy")}
        return mark(regular(self, *args, **kwargs), False)
    method.__name__, method.__doc__ = regular.__name__, regular.__doc__
    return method


def _refused(name: str, regular):
    def method(self, *args, **kwargs):
        if self.numpy_array:
            raise TypeError(
                f"{name}() of a NumPy array computed by the converted code (from `.numpy()`): "
                "NumPy's " + ("sorts in place and returns None" if name == "sort" else
                              "returns a tuple of index arrays") +
                f", which the program does not give. Use the tensor's `rt.{name}(x)` before "
                "`.numpy()`, or do it in NumPy on the returned value.")
        return regular(self, *args, **kwargs)
    method.__name__, method.__doc__ = regular.__name__, regular.__doc__
    return method


def copy(v):
    """`a.copy()` of a value from `numpy()` (a NumPy array's method; a tensor has none)."""
    return mark(assign(v), v.numpy_scalar)


def _reduction(name: str, regular):
    def method(self, *args, **kwargs):
        if self.numpy_array:
            return reduce(self, name, *args, **kwargs)
        if "out" in kwargs:  # (NumPy's call, `np.mean(x)` of a tensor the program computes,
            # which eager code computes in NumPy: the runtime's own methods take no `out`)
            raise self._no_value(f"np.{name}()")
        return regular(self, *args, **kwargs)
    method.__name__, method.__doc__ = regular.__name__, regular.__doc__
    return method


def reduce(v, name: str, axis=None, dtype=None, out=None, keepdims=False, ddof=0, **more):
    """NumPy's `v.<name>(axis, dtype, out, keepdims)` (np.mean(v) calls it so) computed in the
    program, with NumPy's result dtype: a mean of ints or bools is float64, a sum of bools
    int64, `std`/`var` the population's (ddof=0) unless asked."""
    if out is not None or more:
        raise TypeError(f"np.{name}() of a value of the converted program takes axis, dtype, "
                        "keepdims" + (", ddof" if name in ("std", "var") else "") +
                        f"; got {'out' if out is not None else ', '.join(more)}")
    stand_in = np.ones([1] * len(v.shape), v.dtype.name)  # (the rank tells the dtype)
    kw = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kw["dtype"] = dtype
    if name in ("std", "var"):
        kw["ddof"] = ddof
        if ddof not in (0, 1):
            raise ValueError(f"np.{name}() with ddof={ddof} in converted code: ddof 0 (NumPy's "
                             "default) or 1 only")
    if name in ("argmax", "argmin"):
        kw = {"axis": axis}
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(np, name)(stand_in, **kw)).dtype
    x, regular = v, _REGULAR[name]
    if name in ("any", "all"):
        x = as_dtype(v, np.dtype(bool))
    elif name not in ("argmax", "argmin", "max", "min"):
        x = as_dtype(v, want)
    if name in ("std", "var"):
        got = regular(x, axis=axis, unbiased=ddof == 1, keepdim=keepdims)
    elif name in ("argmax", "argmin"):
        got = regular(x, axis=axis)
        if axis is None:
            got = _REGULAR["reshape"](got, [])
    else:
        got = regular(x, axis=axis, keepdim=keepdims)
    return mark(as_dtype(got, want))


def keep_regular(table: dict) -> None:
    """Note the Tensor table's `astype` and `reshape`, which the wrapped methods use."""
    _REGULAR["astype"], _REGULAR["reshape"] = table["astype"], table["reshape"]


def wrap(name: str, fn):
    """The Variable method `name` (`fn`, the Tensor table's) with NumPy's semantics for
    values from `numpy()`."""
    _REGULAR[name] = fn
    if name in _BINARY:
        return _binary(name, fn)
    if name in _COMPARE:
        return _compare(name, fn)
    if name in _UNARY:
        return _unary(name, fn)
    if name == "__getitem__":
        return _getitem(fn)
    if name == "astype":
        return _astype(fn)
    if name in _SHAPES:
        return _reshaping(fn)
    if name in _OTHERS:
        return _refused(name, fn)
    return _reduction(name, fn)
