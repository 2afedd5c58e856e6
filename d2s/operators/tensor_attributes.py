"""`x.name`, `x.is_leaf` and `x.grad` of a value converted code computes, as eager code sees it.

A traced tensor is a `Variable`, whose own `name` is the program's (`x` for an argument, an
internal `t3` for a computed value) and which has no `is_leaf` or `grad`. Eager code reads the
Tensor's: a computed tensor has `name` None (no op names its result), is a leaf exactly when no
gradient path reached it when it was made (a `detach()`, an op of inputs that need none; the
run decides where a tensor `if` or graph loop does: `stop_flags.py`), and has `.grad` None (a
non-leaf keeps no gradient, a leaf that needs none gets none). Of an argument the answers
belong to the tensor passed in, which one program serves for every tensor of that shape,
dtype and `stop_gradient` whatever its name and history: where they can differ between such
calls, reading them is a `ConversionError` at the user's line.

    x.name           ->   _d2s.tensor_attribute(x, 'name')   (`x.dtype` too)
    y.name = 'out'   ->   _d2s.set_tensor_name(y, 'out')
    y.is_leaf, y.grad     (`Variable.__getattr__` asks `read_missing`: no call in the code)
"""
from __future__ import annotations

import sys

import numpy as np

from runtime.program.origin import frame_line

from ..errors import ConversionError
from ..pyct import loader
from . import branch_dtypes, number_or_tensor
from .container_types import container_type
from .none_or_tensor import flag_of
from .stop_reads import run_flag
from .type_queries import python_type
from .variables import is_variable, user_origin, where

# (what the converter sends here, or `Variable.__getattr__`)
ATTRIBUTES = ("name", "is_leaf", "grad", "clear_grad", "clear_gradient")


def tensor_attribute(x, name: str):
    """`x.<name>` read by converted user code: eager's answer for a graph value."""
    if not is_variable(x):
        return getattr(x, name)
    if name == "dtype":
        return _dtype(x)
    return _answer(x, name)


def _dtype(x):
    """`x.dtype`: a value from `numpy()` has NumPy's (`str()` 'float32', `== np.float32`),
    a Python number none (eager's AttributeError)."""
    _eager_type_has(x, "dtype")
    if getattr(x, "number_when", None) is not None:  # (a Python number on some runs)
        number_or_tensor.check_attribute(x, "dtype", user_origin())
    branch_dtypes.check_attribute(x, "dtype")  # (a dtype a tensor `if` decided: refused)
    return np.dtype(x.dtype.name) if x.numpy_array else x.dtype


def read_missing(v, name: str):
    """`v.is_leaf`, `v.grad`, `v.clear_grad` of a Variable (which has none): eager's answer
    for a read by converted user code (`Variable.__getattr__` asks); NotImplemented for any
    other read."""
    if name not in ATTRIBUTES:
        return NotImplemented
    f = sys._getframe(2)  # (the code that read the attribute)
    if loader.lookup(f.f_code.co_filename, frame_line(f)) is None:
        return NotImplemented
    return _answer(v, name)


def _answer(x, name: str):
    _eager_type_has(x, name)
    if getattr(x, "number_when", None) is not None:  # (a Python number on some runs)
        number_or_tensor.check_attribute(x, name, user_origin())
    if flag_of(x) is not None:
        _refuse(x, name, "that is None on some runs and a tensor on others (a tensor "
                "condition decided which)", "make it a tensor on every path before reading it")
    if x.name in x.program.inputs:
        answer = _of_argument(x, name)
    elif name == "name":
        return None
    elif name == "is_leaf":
        return is_leaf(x)
    else:  # (a non-leaf keeps no gradient, a leaf that needs none gets none)
        _refuse_leaf_needing_grad(x, name)
        answer = None
    # (`clear_grad()`: eager sets a .grad that is None here to None)
    return answer if name in ("is_leaf", "grad") else _no_op


def _no_op() -> None:
    """`clear_grad()` of a traced tensor whose `.grad` is None."""


def _refuse_leaf_needing_grad(x, name: str) -> None:
    """`.grad` of a leaf made in the converted code that needs a gradient: eager's depends
    on the backward calls of the run."""
    if is_leaf(x) is True and not x.stop_gradient:
        _refuse(x, name, "made in the converted code as a leaf that needs a gradient "
                "(`detach()` or `to_tensor`, then `stop_gradient = False`)",
                "read it after the call, on the tensor the call returns, or use `rt.grad`")


def is_leaf(v):
    """Whether eager code's tensor for the computed value `v` is a leaf (has no autograd node):
    a bool, or a bool graph value where the run decides whether it has a gradient path."""
    if v.detached:
        return True
    made = v.made_stop  # (what stop_gradient was before user code first set it)
    if made is None:  # (an op records a node exactly where its result needs one)
        if v.stop_varies:
            _refuse(v, "is_leaf", "that a loop whose condition is a tensor carries, without a "
                    "gradient path when the loop starts and with one from its second trip on",
                    "decide before the loop, from the value the loop starts from")
        return run_flag(v) if v.stop_when is not None else v.stop_gradient
    if v.stop_when is not None:
        _refuse(v, "is_leaf", "whose stop_gradient was set after a tensor `if` or graph loop "
                "decided whether it has a gradient path",
                "read it before setting stop_gradient")
    return made


def _of_argument(x, name: str):
    """An argument's attribute: the same for every tensor one program serves, or refused."""
    if name == "name":
        _refuse(x, name, "that is an argument of the converted function: eager code gives "
                "the passed tensor's name (a Parameter's, or None), and one program serves "
                "every tensor of this shape and dtype, whatever its name",
                "pass the name as a str argument, or read it before the call")
    if not x.stop_gradient:
        _refuse(x, name, "that is an argument needing a gradient: eager code's answer (or "
                "what `clear_grad()` clears) depends on the passed tensor's history (a leaf, or "
                "computed by eager code before the call), and one program serves both",
                "use it before or after the call")
    return True if name == "is_leaf" else None  # (a tensor that needs no gradient gets none)


def set_tensor_name(obj, value) -> None:
    """`obj.name = value` in converted code (a graph value has the program's name)."""
    if not is_variable(obj):
        obj.name = value
        return
    _refuse(obj, "name", "set in the converted code (the program names its values itself)",
            "name the tensor outside the converted function")


def _eager_type_has(x, name: str) -> None:
    """A graph value standing for a Python number or a list: eager's AttributeError (no
    Python number type has these attributes)."""
    kind = container_type(x) or python_type(x)
    if kind:
        raise AttributeError(f"'{kind.__name__}' object has no attribute '{name}'")
    if kind is False:  # (a Python number whose type the run decides)
        raise AttributeError(f"a Python number has no attribute '{name}'")


def _refuse(x, name: str, what: str, fix: str):
    src = user_origin()
    raise ConversionError(
        f"`.{name}` ({where(src)}) of a tensor {what}: the converted call cannot give eager "
        f"code's answer here. {fix[0].upper()}{fix[1:]}.", origin=src)
