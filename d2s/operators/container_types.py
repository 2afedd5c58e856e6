"""`type(x)` and `isinstance(x, ...)` of the values converted code holds in place of eager's
containers and numbers: a list a graph loop or a tensor `if` grows is a tensor array (a
`Variable`, or a `StructArray` of them for a list of structures), which eager code has as a
`list` (a `tuple` where the code built a tuple: `out = out + (t,)`, `tuple(lst)`); a graph
value standing for a Python number (a graph loop's counter, a number carried through a
loop) is eager's `int`, `float` or `bool`; a graph value standing for a tensor is a
`rt.Tensor`.

    type(out)                ->  tuple    (out = (); out = out + (x[i],) in a graph loop)
    isinstance(names, list)  ->  True     (names.append("s") in a graph loop)
    type(i)                  ->  int      (i of `for i in range(n_tensor)`)
"""
from __future__ import annotations

import builtins

import runtime as rt

from ..errors import ConversionError
from .lists import StructArray
from .made_sets import type_ as set_type
from .variables import is_variable, user_origin, where


def container_type(x):
    """The Python container type eager code has for `x` (`list` or `tuple`), where `x` is a
    tensor array or a list of structures standing for one; None otherwise."""
    if isinstance(x, StructArray) or is_variable(x) and x.is_array:
        return tuple if getattr(x, "_d2s_tuple", False) else list
    return None


def number_type(x):
    """The Python number type (`bool`, `int`, `float`) a graph value standing for a number
    of one type on every run has; None where `x` is no such value."""
    if not is_variable(x) or not getattr(x, "python_scalar", False) or x.is_array or x.shape:
        return None
    if x.float_when is not None or x.bool_when is not None or x.number_type_unknown:
        return None
    return {"b": bool, "f": float}.get(x.dtype.kind, int)


def type_(*args):
    """`type(x)`: eager's type of a value converted code holds as a graph value (see the
    module); `type(name, bases, dict)` and other values as Python's (made sets: `set`)."""
    if len(args) != 1:
        return set_type(*args)
    x = args[0]
    found = container_type(x) or number_type(x)
    if found is not None:
        return found
    if is_variable(x):
        if getattr(x, "number_when", None) is not None or getattr(
                x, "python_scalar", False) and not x.shape:
            src = user_origin()
            raise ConversionError(
                f"type() of a value that is a Python number of a type the run decides, or a "
                f"number on some runs and a tensor on others ({where(src)}): one program "
                "cannot give eager's type for every input. Keep it a tensor on every path "
                "(`rt.to_tensor(...)`), or numbers of one type (`2.0` for `2`).", origin=src)
        return rt.Tensor
    return set_type(x)


def instance_of(obj, classes: tuple):
    """`isinstance(obj, classes)` of a tensor array standing for a list or tuple: by that
    container type (None where `obj` is no such value)."""
    found = container_type(obj)
    if found is None:
        return None
    return any(isinstance(c, type) and builtins.issubclass(found, c) for c in classes)
