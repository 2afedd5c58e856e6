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
    """`target.pop(*index)`, returning `(list, item)`; on a tensor array (a list whose length
    depends on a tensor) the item is read and the array shrinks by one, as in Python. The
    index is a Python int (negative from the end) or an integer tensor; popping an empty
    array raises IndexError when the program runs."""
    report.record("list", target)
    if is_variable(target) and target.is_array:
        from runtime.ops.arrays import array_pop
        if len(index) > 1:
            raise TypeError(f"pop expected at most 1 argument, got {len(index)}")
        i = index[0] if index else -1
        if isinstance(i, bool) or not (isinstance(i, int) or is_variable(i) or hasattr(
                i, "dtype")):
            raise TypeError(f"'{type(i).__name__}' object cannot be interpreted as an integer")
        return target, array_pop(target, i)
    return target, target.pop(*index)
