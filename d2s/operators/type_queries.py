"""`type()` and `hasattr()` of values the converted code computes, as eager code sees them.

A graph value stands for a tensor (eager's `type(t)` is `rt.Tensor`, not the program's
`Variable`: `type(x) is paddle.Tensor` takes eager's path), for a Python number (`float(t)`:
its Python type), or for a tensor on some runs and a Python number or None on others
(`number_or_tensor`, `none_or_tensor`). For the last, `type()` differs between runs, and one
program cannot give a Python class chosen when it runs: a `ConversionError` at the user's line
(`isinstance` and `is None` are decided per run). `hasattr(v, name)` of such a value is the
run's answer, a graph value standing for a Python bool, where the two kinds differ.

    type(x)            ->   _d2s.type_(x)
    hasattr(b, "item") ->   _d2s.hasattr_(b, "item")
"""
from __future__ import annotations

import builtins

import numpy as np

import runtime as rt

from ..errors import ConversionError
from . import run_types
from .none_or_tensor import flag_of
from .variables import is_variable, user_origin, where

_PYTHON = {"b": builtins.bool, "i": builtins.int, "u": builtins.int, "f": builtins.float}


def _kinds(v):
    """(the flag saying `v` is the other kind on this run, an instance of that kind) of a
    value whose kind the run decides; None otherwise."""
    flag = flag_of(v)
    if flag is not None:
        return flag, None
    flag = getattr(v, "number_when", None)
    if flag is not None:
        return flag, {"bool": False, "int64": 0}.get(v.number_value.dtype.name, 0.0)
    return None


def _eager_kind(v):
    """What eager code holds for the graph value `v`, to ask `hasattr` of: the Tensor class
    (whose instances have no attribute of their own: `hasattr(out, "append")` of a tensor is
    False, of its `set_value`, `grad`, `is_leaf` True), or a list / tuple where `v` is a
    tensor array."""
    if v.is_array:
        return () if getattr(v, "_d2s_tuple", False) else []
    return rt.Tensor


def python_type(v):
    """The Python class `v` stands for where it stands for a Python number of one type on
    every run; None where it stands for none, False where the run decides the type."""
    if not getattr(v, "python_scalar", False) or v.shape:
        return None
    if v.float_when is not None or v.bool_when is not None or v.number_type_unknown:
        return False
    return _PYTHON.get(v.dtype.kind)


def typing(type_):
    """`type_` with graph values given eager's class (see the module)."""
    def type_of(*args):
        if len(args) != 1 or not is_variable(args[0]) or args[0].is_array:
            return type_(*args)
        v = args[0]
        number = python_type(v)
        chosen = _run_type(v, number)
        if chosen is not None:
            return chosen  # (the class a tensor decided: `run_types`)
        if _kinds(v) is not None or number is False:
            src = user_origin()
            other = "None" if flag_of(v) is not None else "a Python number"
            if number is False:
                other, what = "another Python number type", "a Python number"
            else:
                what = "a NumPy value" if v.numpy_array else "a tensor"
            raise ConversionError(
                f"type() ({where(src)}) of a value that is {what} on some runs and {other} "
                "on others (a condition that is a tensor decided which): one program cannot "
                "give a Python class chosen when it runs. Test it with `isinstance(v, ...)` "
                "or `v is None`, which converted code decides per run.", origin=src)
        if number is None and v.numpy_array:  # (`x.numpy()`: eager's array, a NumPy
            return np.dtype(v.dtype.name).type if v.numpy_scalar else np.ndarray  # scalar)
        return number if number is not None else rt.Tensor
    return type_of


def _run_type(v, number):
    """A `run_types.RunType` for `v` whose Python class the run decides; None where that is
    not known (a number read from a list of ints beside floats) or not decided by the run."""
    if number is False:
        if v.number_type_unknown:
            return None
        wide = _PYTHON[v.dtype.kind]
        classes, flags = [], []
        if v.float_when is not None:
            classes.append(builtins.float)
            flags.append(v.float_when)
            wide = builtins.int
        if v.bool_when is not None:
            classes.append(builtins.bool)
            flags.append(v.bool_when)
        return run_types.run_type(classes + [wide], flags + [None])
    kinds = _kinds(v)
    if kinds is None:
        return None
    flag, other = kinds
    if v.numpy_array:
        mine = np.dtype(v.dtype.name).type if v.numpy_scalar else np.ndarray
    else:
        mine = rt.Tensor
    return run_types.run_type([type(other), mine], [flag, None])


def hasattr_(obj, name):
    """`hasattr(obj, name)`; of a value whose kind the run decides, the run's answer."""
    kinds = _kinds(obj) if is_variable(obj) else None
    if kinds is None:
        number = python_type(obj) if is_variable(obj) else None
        if number:  # (`float(t)` has no `.item`, as eager's float)
            return builtins.hasattr(number(), name)
        if number is False:  # (an int or a float, which the run decides)
            return builtins.hasattr(0, name) and builtins.hasattr(0.0, name)
        if is_variable(obj):  # (eager's Tensor, or list / tuple for a tensor array, has
            return builtins.hasattr(_eager_kind(obj), name)  # it: not the Variable)
        return builtins.hasattr(obj, name)
    flag, other = kinds
    as_other = builtins.hasattr(other, name)
    as_tensor = builtins.hasattr(rt.Tensor, name)
    if as_other == as_tensor:
        return as_other
    out = rt.assign(flag) if as_other else rt.logical_not(flag)
    out.python_scalar = True
    return out
