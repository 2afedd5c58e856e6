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
from ..ops.combine import stack
from ..ops.math import assign
from ..ops.shape import reshape
from .numpy_functions import out_of_graph
from .numpy_values import as_dtype, mark

# NumPy's array constructors that converted code calls through `construct`
CONSTRUCTORS = ("asarray", "array", "asanyarray", "ascontiguousarray")
# NumPy's scalar types (`np.float32(v)`): a NumPy scalar of a 0-d value, else an array
SCALAR_TYPES = ("float16", "float32", "float64", "half", "single", "double", "int8", "int16",
                "int32", "int64", "intp", "uint8", "uint16", "uint32", "uint64", "bool_",
                "bool")
NAMES = frozenset(CONSTRUCTORS + SCALAR_TYPES)


def _holds_variables(v) -> bool:
    if isinstance(v, (list, tuple)):
        return any(_holds_variables(x) for x in v)
    return is_variable(v)


def construct(f, *args, **kwargs):
    """`f(*args, **kwargs)` for NumPy's constructor or scalar type `f` (see the module)."""
    if not any(_holds_variables(v) for v in (*args, *kwargs.values())):
        return f(*args, **kwargs)
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
