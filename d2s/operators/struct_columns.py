"""`zip(*pairs)` of a list of tuples (or lists) that the program grows (a `StructArray`: one
tensor array per part), the transpose idiom `a, b = zip(*pairs)` /
`a, b = map(list, zip(*pairs))`.

    zip(*pairs)   ->   _d2s.zip_star(pairs)

Column `j` is the tensor array of the items' part `j` (a tuple, as `zip` gives; a part that is
itself a structure is a list of structures as tensor arrays). The count of columns is the
items' arity, known when the program is built, except that with no items eager's `zip(*[])`
has no columns at all: unpacking the columns (`a, b = ...`, straight or through `map`) checks
when the program runs that the list has items, and raises eager's `ValueError: not enough
values to unpack (expected 2, got 0)` at the user's line when it has none. Other uses of the
columns (a `for` over them, `list(...)` of them) have a count only the run decides and are
refused at the user's line. Of anything else `zip_star` is `zip(*x)`.
"""
from __future__ import annotations

import dis
import sys

import runtime as rt
from runtime.program.debug_ops import raise_error
from runtime.pytree import LEAF

from .builtins import zip_
from .exceptions import short_name
from .lists import StructArray, _struct_class
from .variables import user_origin, where

_UNPACKING = ("UNPACK_SEQUENCE", "UNPACK_EX")


def zip_star(items):
    """`zip(*items)`."""
    if not isinstance(items, StructArray):
        return zip_(*items)
    (kind, _cls, _extra), subtrees = items.tree
    src = user_origin()
    if kind not in (tuple, list):
        raise TypeError(
            f"zip(*items) of a list of {kind.__name__ if isinstance(kind, type) else kind}s "
            f"whose length depends on a tensor ({where(src)}): only a list of tuples or lists "
            "is transposed when the program runs. Grow one list per part in the loop.")
    return _Columns(items, _columns(items, subtrees), src)


def _columns(items, subtrees) -> list:
    """The column of each part: its tensor array (a tuple), or a StructArray of its leaves."""
    leaves = tuple.__iter__(items)
    out = []
    for tree in subtrees:
        parts = [next(leaves) for _ in range(_count_leaves(tree))]
        column = parts[0][:] if tree is LEAF else _struct_class(tree)(a[:] for a in parts)
        column._d2s_tuple = True  # (zip gives tuples)
        out.append(column)
    return out


def _count_leaves(tree) -> int:
    return 1 if tree is LEAF else sum(_count_leaves(t) for t in tree[1])


class _Columns:
    """The columns of `zip(*items)`: iterated once, by an unpacking only."""

    def __init__(self, items, columns, src):
        self._items, self._columns, self._src = items, columns, src

    def __iter__(self):
        return self._each()

    def _each(self):
        frame = sys._getframe(1)  # (the frame unpacking the columns, also through `map`)
        unpacking = _instruction(frame)
        if unpacking is None:
            src = self._src
            raise TypeError(
                f"the columns of zip(*items) of a list of tuples whose length depends on a "
                f"tensor ({where(src)}) are used as a sequence: with no items eager's zip has "
                "no columns, a count only the run decides. Unpack them (`a, b = zip(*pairs)`, "
                "`a, b = map(list, zip(*pairs))`) or grow one list per part in the loop.")
        self._check_filled(unpacking)
        yield from self._columns

    def _check_filled(self, unpacking):
        """Eager's unpacking of no columns raises; so does the program when no item is."""
        src = self._src
        name, arg = unpacking
        expected = arg if name == "UNPACK_SEQUENCE" else (
            f"at least {(arg & 0xFF) + (arg >> 8)}")

        def empty():
            raise_error(ValueError(
                f"not enough values to unpack (expected {expected}, got 0)"),
                at=f"{short_name(src.filename)}:{src.lineno}" if src else "")

        rt.static.nn.cond(self._items.length() == 0, empty, lambda: None)


def _instruction(frame):
    """(name, argument) of the unpacking instruction `frame` runs now, or None."""
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset == frame.f_lasti:
            return (ins.opname, ins.arg) if ins.opname in _UNPACKING else None
    return None
