"""`type(x)` and `isinstance(x, ...)` of the containers converted code holds as graph values:
a list a graph loop or a tensor `if` grows is a tensor array (a `Variable`, or a
`StructArray` of them for a list of structures), which eager code has as a `list` (a `tuple`
where the code built a tuple: `out = out + (t,)`, `tuple(lst)`). (`type_queries` gives the
class of the other graph values: `rt.Tensor`, a Python number's type.)

    type(out)                ->  tuple    (out = (); out = out + (x[i],) in a graph loop)
    isinstance(names, list)  ->  True     (names.append("s") in a graph loop)
"""
from __future__ import annotations

import builtins

from .lists import StructArray
from .variables import is_variable


def container_type(x):
    """The Python container type eager code has for `x` (`list` or `tuple`), where `x` is a
    tensor array or a list of structures standing for one; None otherwise."""
    if isinstance(x, StructArray) or is_variable(x) and x.is_array:
        return tuple if getattr(x, "_d2s_tuple", False) else list
    return None


def typing(type_):
    """`type_` with tensor arrays given eager's container class."""
    def type_of(*args):
        found = container_type(args[0]) if len(args) == 1 else None
        return found if found is not None else type_(*args)
    return type_of


def instance_of(obj, classes: tuple):
    """`isinstance(obj, classes)` of a tensor array standing for a list or tuple: by that
    container type (None where `obj` is no such value)."""
    found = container_type(obj)
    if found is None:
        return None
    return any(isinstance(c, type) and builtins.issubclass(found, c) for c in classes)
