"""NumPy's array constructors and scalar types of values while a program is built:
`np.asarray(t)`, `np.array([a.max(), b.max()])`, `np.float32(loss.sum())`, `np.int64(i[0])`.

Eager NumPy converts a Tensor with `__array__` (its `numpy()`), so `np.asarray(t)` is an
ndarray of the tensor's dtype and `np.float32(t.sum())` a NumPy scalar; while a program is
built there is no array yet, and a Variable's `__array__` raises. Converted code calls these
through `construct` (`_d2s.numpy_(np.asarray)(t)`, `d2s/converters/builtin_calls.py`), which
gives the graph value flagged as NumPy's (`numpy_values`), of the dtype and shape NumPy's
constructor gives (found by running it on stand-ins of the operands' dtypes and shapes: a list
of 0-d float32 tensors and Python floats is float64, as eagerly), and a NumPy scalar where the
scalar type is given a 0-d value. Without a graph value among the operands it is the NumPy
call itself.

>>> import numpy as np
>>> import runtime as rt
>>> with rt.static.program_guard(rt.static.Program()):
...     y = rt.static.data('y', [3], 'float32')
...     a, s = construct(np.asarray, y), construct(np.float64, y.sum())
...     pair = construct(np.array, [y[0], 1.5])
>>> a.numpy_array, a.numpy_scalar, s.dtype.name, s.numpy_scalar, pair.dtype.name
(True, False, 'float64', True, 'float64')
"""
from __future__ import annotations

import numpy as np

from ..core import is_variable
from ..ops.array_number_kinds import holds_number_kinds, holds_python_numbers
from ..ops.arrays import array_pack
from ..ops.combine import stack
from ..ops.creation import arange, full
from ..ops.math import assign
from ..ops.shape import reshape
from .numpy_functions import FORWARDED, out_of_graph
from .numpy_values import as_dtype, mark

# NumPy's array constructors that converted code calls through `construct`
CONSTRUCTORS = ("asarray", "array", "asanyarray", "ascontiguousarray")
# NumPy's scalar types (`np.float32(v)`): a NumPy scalar of a 0-d value, else an array
SCALAR_TYPES = ("float16", "float32", "float64", "half", "single", "double", "int8", "int16",
                "int32", "int64", "intp", "uint8", "uint16", "uint32", "uint64", "bool_",
                "bool")
# NumPy's creation functions: of a size the program computes (`np.zeros(int(n))`), the array
# the runtime's creation op makes, in NumPy's dtype
CREATORS = ("zeros", "ones", "full", "arange")
# NumPy's reductions of an array_like (`np.mean(losses)` of a list of `loss.item()` values:
# NumPy makes the list an array, which `construct` builds as `np.asarray` does)
REDUCTIONS = FORWARDED - {"reshape", "squeeze", "shape", "ndim", "size"}
NAMES = frozenset(CONSTRUCTORS + SCALAR_TYPES + CREATORS) | REDUCTIONS


def _holds_variables(v) -> bool:
    if isinstance(v, (list, tuple)):
        return any(_holds_variables(x) for x in v)
    return is_variable(v)


def construct(f, *args, **kwargs):
    """`f(*args, **kwargs)` for NumPy's constructor or scalar type `f` (see the module)."""
    if not any(_holds_variables(v) for v in (*args, *kwargs.values())):
        return f(*args, **kwargs)
    if f.__name__ in CREATORS:
        return mark(_created(f, *args, **kwargs), False)
    if f.__name__ in REDUCTIONS:
        first = args[0] if args else kwargs.pop("a")
        if isinstance(first, (list, tuple)):
            first = _array(np.asarray, first)
        elif is_variable(first) and first.is_array:
            first = _grown(f.__name__, first)
        return f(first, *args[1:], **kwargs)
    if isinstance(f, type):
        if len(args) != 1 or kwargs:
            raise TypeError(f"np.{f.__name__}() takes one value here, of a value the "
                            "converted code computes")
        source = args[0]
        return _fresh(as_dtype(_value(source), np.dtype(f)), source, scalar=None)
    return _array(f, *args, **kwargs)


def _array(f, obj, dtype=None, order=None, *, copy=None, ndmin=0, subok=False, like=None,
           device=None):
    name = f.__name__
    if order not in (None, "K", "A", "C") or like is not None or copy is False and (
            name == "array" or dtype is not None):
        raise TypeError(f"np.{name}() with order={order!r}, like= or copy=False of a value "
                        "the converted code computes: the program makes a new C-ordered "
                        "array; call it with the value (and dtype=) only")
    out = _value(obj)
    if dtype is not None:
        out = as_dtype(out, np.dtype(dtype))
    if len(out.shape) < ndmin:
        out = reshape(out, [1] * (ndmin - len(out.shape)) + list(out.shape))
    if out is obj and name in ("array", "ascontiguousarray") and copy is not False:
        out = assign(out)  # (np.array copies: a write to one is not seen in the other)
    return _fresh(out, obj, scalar=False)


def _created(f, *args, dtype=None, **kwargs):
    """`np.zeros(n)`, `np.ones(n)`, `np.full(n, v)`, `np.arange(a, b, step)` of sizes or bounds
    the program computes; the dtype NumPy gives (of stand-in values of the operands' kinds)."""
    name = f.__name__
    if kwargs or len(args) > (3 if name == "arange" else 2 if name == "full" else 1):
        raise TypeError(f"np.{name}() of a size the converted code computes takes the size "
                        "(and the fill value / bounds) and dtype= only here")
    if name == "arange":
        want = np.dtype(dtype) if dtype is not None else f(*map(_number, args)).dtype
        bounds = [out_of_graph(v) for v in args]
        start, end, step = ([0] + bounds if len(bounds) == 1 else bounds) + [1] * (3 - max(
            len(bounds), 2))
        return arange(start, end, step, dtype=want.name)
    shape = args[0] if isinstance(args[0], (list, tuple)) else [args[0]]
    if name == "full":
        value = args[1]
        want = np.dtype(dtype) if dtype is not None else np.asarray(_number(value)).dtype
        return full(shape, out_of_graph(value), dtype=want.name)
    return full(shape, 0 if name == "zeros" else 1, dtype=np.dtype(dtype or float).name)


def _number(v):
    """A stand-in of `v`'s kind for NumPy to tell a result's dtype."""
    if not is_variable(v):
        return v
    if v.python_scalar and not v.numpy_array:
        return {"b": True, "f": 1.0}.get(v.dtype.kind, 1)
    return np.ones((), v.dtype.name)[()]


def _grown(name: str, array):
    """NumPy's array of a list of Python numbers whose length the run decides (a tensor array
    of one type of number): its items stacked, float64 of floats as eagerly; an empty one is
    float64 eagerly whatever it would hold, so `sum` / `prod` of ints or bools is refused."""
    if not holds_python_numbers(array) or holds_number_kinds(array) or getattr(
            array, "mixed_numbers", False) or name in ("sum", "prod") and (
            array.dtype.name != "float64"):
        raise TypeError(
            f"np.{name}() of a list whose length only the run decides ({array.type_str()}): "
            "the program takes NumPy's reductions of such lists of Python floats, and of "
            "ints or bools except sum / prod (NumPy's array of an empty list is float64, "
            f"whatever the list would hold). Use Python's `{name}(lst)` where it has one, or "
            "keep the values a tensor and reduce it with rt.")
    return mark(array_pack(array), False)


def _fresh(out, source, scalar):
    """`out` flagged as NumPy's value; a copy where it is `source` standing for a Python
    number (its flags are the number's)."""
    if out is source and getattr(source, "python_scalar", False):
        out = assign(out)
        out.python_scalar = False
    return mark(out, scalar)


def _value(obj):
    """The graph value eager NumPy makes of `obj` (a graph value, or nested lists of graph
    values and numbers), in NumPy's dtype."""
    if not isinstance(obj, (list, tuple)):
        return out_of_graph(obj) if is_variable(obj) else assign(np.asarray(obj))
    want = np.asarray(_stand_in(obj)).dtype  # (NumPy's errors for ragged lists, as eagerly)
    return stack([as_dtype(_value(v), want) for v in obj])


def _stand_in(obj):
    if isinstance(obj, (list, tuple)):
        return [_stand_in(v) for v in obj]
    if not is_variable(obj):
        return obj
    if obj.python_scalar and not obj.numpy_array:  # (eager: a Python number)
        return {"b": False, "f": 0.0}.get(obj.dtype.kind, 0)
    if any(d < 0 for d in obj.shape):
        raise TypeError(f"np.array() of a list holding a value of shape {list(obj.shape)} "
                        "that the converted code computes: its size is known only when the "
                        "program runs. Stack the tensors with rt.stack first")
    return np.zeros(obj.shape, obj.dtype.name)
