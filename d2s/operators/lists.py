"""List operations that generated code calls (see `d2s.converters.lists`).

A Python list is changed in place and returned, as `list.append` would change it; inside a
graph loop the list is a tensor array and the new array is returned.
"""
from __future__ import annotations

from .. import report
from .variables import is_variable


def list_append(target, value):
    """`target.append(value)`, returning the (possibly new) list."""
    report.record("list", target)
    if is_variable(target) and target.is_array:
        import runtime as rt
        if isinstance(value, (tuple, list, dict)):
            _no_structures(value)
        return rt.static.array_write(value, rt.static.array_length(target), target)
    target.append(value)
    return target


def _no_structures(value):
    from .mutation import StateChangeError
    from .variables import user_origin, where
    src = user_origin(3)
    raise StateChangeError(
        f"a {type(value).__name__} is appended to a list whose length depends on a tensor "
        f"({where(src)}); such a list is a tensor array, which holds tensors only. Keep one "
        "list per part (xs.append(a); ys.append(b)) instead of a list of "
        f"{type(value).__name__}s.", src)


def list_pop(target, *index):
    """`target.pop(*index)`, returning `(list, item)`."""
    if is_variable(target) and target.is_array:
        raise TypeError("pop() on a list that became a tensor array inside a loop whose "
                        "condition is a tensor is not supported; index it instead")
    return target, target.pop(*index)
