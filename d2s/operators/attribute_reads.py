"""`getattr(x, "name")` and `vars(x)` of a value converted code computes, as `x.name` reads.

The converter rewrites `x.name`, `x.shape` and `x.size` (`converters/builtin_calls.py`), but a
traced tensor reached through `getattr` would answer as the `Variable` it is: `getattr(x,
"name")` the program's `t3`, `getattr(x, "program", None)` an internal object where eager's
Tensor has none. Here `getattr` asks what `x.<attr>` asks, so both spellings give one answer;
`vars(x)` of a traced tensor (a Variable's internals, eager's Tensor's user-set fields) is
refused at the line.

    getattr(x, "name")        ->   _d2s.getattr_(x, "name")
    getattr(x, key, None)     ->   _d2s.getattr_(x, key, None)
    vars(x)                   ->   _d2s.vars_(x)
"""
from __future__ import annotations

import builtins
import os
import sys

import numpy as np

from ..errors import ConversionError
from . import number_or_tensor, trace_state
from .builtins import shape, size
from .tensor_attributes import ATTRIBUTES, tensor_attribute
from .type_queries import hasattr_, python_type
from .variables import is_variable, user_origin, where

_NO_DEFAULT = object()
# (the attributes the converter rewrites too)
_REWRITTEN = {"shape": shape, "size": size, "dtype": lambda v: tensor_attribute(v, "dtype")}


def getattr_(obj, name, default=_NO_DEFAULT):
    """`getattr(obj, name[, default])`; of a graph value, what `obj.<name>` gives converted
    code (eager's Tensor's attribute, not the Variable's)."""
    if not is_variable(obj) or not isinstance(name, str):
        if default is _NO_DEFAULT:
            return builtins.getattr(obj, name)
        return builtins.getattr(obj, name, default)
    if getattr(obj, "number_when", None) is not None:  # (a Python number on some runs)
        src = user_origin()
        number_or_tensor.looked_up(obj, name, src)
        number_or_tensor.check_attribute(obj, name, src)
        return builtins.getattr(obj, name)
    if hasattr_(obj, name) is False:  # (eager's Tensor, or list for an array, has none)
        if default is not _NO_DEFAULT:
            return default
        kind = "list" if obj.is_array else getattr(python_type(obj), "__name__", "Tensor")
        raise AttributeError(f"'{kind}' object has no attribute '{name}'")
    if name in ATTRIBUTES:
        return tensor_attribute(obj, name)
    read = _REWRITTEN.get(name)
    return read(obj) if read is not None else builtins.getattr(obj, name)


def attrgetter_(name, *names):
    """`operator.attrgetter(name, ...)`: a callable reading as `getattr_` does, so a graph
    value's `shape` has its run-time dims there too (a saved model of any batch size)."""
    names = (name, *names)
    for n in names:
        if not isinstance(n, str):
            raise TypeError("attribute name must be a string")

    def get(obj):
        values = [_dotted(obj, n) for n in names]
        return values[0] if len(values) == 1 else tuple(values)
    return get


def _dotted(obj, name: str):
    for part in name.split("."):
        obj = getattr_(obj, part)
    return obj


def read_unknown_shape(v):
    """`v.shape` of a value with a dim unknown until the program runs, read while a converted
    function is traced by Python code d2s did not convert (a property's getter, a dunder
    method, a library's function): the dims as `shape` gives converted code (the unknown
    ones read when the program runs), not -1, which would compute silently wrong numbers
    (`x[0] / box.n` of a saved model of any batch size). NotImplemented for the runtime's and
    d2s's own reads, and outside a trace (the static API's `x.shape` keeps -1)."""
    if len(trace_state._stack()) < 2:
        return NotImplemented
    caller = sys._getframe(2).f_code.co_filename  # (the code that read `.shape`)
    if caller.startswith(_INTERNAL):
        return NotImplemented
    return shape(v)


_INTERNAL = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (
    sys.modules["runtime"], sys.modules["d2s"], np))  # (and NumPy's own Python code, which
# `numpy_functions` runs on a graph value until it asks for the array: its static shape)


def vars_(*args):
    """`vars(obj)`; of a graph value, refused (its fields are the program's)."""
    if len(args) == 1 and is_variable(args[0]):
        src = user_origin()
        raise ConversionError(
            f"vars() ({where(src)}) of a tensor the converted code computes: its fields "
            "exist only as the program's, not as eager's Tensor's. Read the attributes you "
            "need by name (`x.name`, `x.stop_gradient`), or call vars() outside the converted "
            "function.", origin=src)
    return builtins.vars(*args)
