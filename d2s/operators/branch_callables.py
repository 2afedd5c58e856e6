"""A function (or Layer, or bound method) that differs between the branches of a tensor `if`
(`act = F.relu if x.sum() > 0 else rt.tanh`; `head = self.a` / `head = self.b`;
`pick = lambda v: v.max()` / `lambda v: v.min()`): which one eager code calls only the run
decides. The `if` gives out the callable's index into the table of the callables the trace
saw at that place (an int64 graph value), and code after it holds a `ChosenCallable`: a call
of it from converted code (`calls.call`) is a tensor `if` calling each (converted), so its
result follows the run. A call from code that is not converted, returning it, or storing it
on an object the caller holds is refused at the line.

Used by `control_flow._GraphIf` as `branch_strs` is: `find` the places after both branches
were traced once, `as_ids` on each branch's values, `as_items` on the `if`'s outputs."""
from __future__ import annotations

import types

import numpy as np

import runtime as rt
from runtime.core import is_tensor

from ..errors import ConversionError
from .branch_strs import _replace, differing_paths
from .variables import is_variable, user_origin, where


class ChosenCallable:
    """A callable a tensor `if` chose: `index` (an int64 graph value) into `table`."""

    __slots__ = ("index", "src", "table")

    def __init__(self, index, table: list, src):
        self.index, self.table, self.src = index, table, src

    def __call__(self, *args, **kwargs):  # (converted code calls it through `calls.call`)
        raise self.refused("called by code that is not converted")

    def refused(self, how: str) -> ConversionError:
        names = ", ".join(_name(f) for f in self.table)
        return ConversionError(
            f"a function chosen by an `if` whose condition is a tensor ({where(self.src)}; "
            f"one of {names}) is {how}: which one only the run decides. Call it from the "
            "converted function itself, or branch on the tensor around each call.",
            origin=user_origin(3))


def refuse_kept(value, how: str) -> None:
    """A `ChosenCallable` the call would give back (returned, or stored on an object the
    caller holds): the function itself exists only in the trace, so it is refused."""
    if type(value) is ChosenCallable:
        raise value.refused(how)


def _name(f) -> str:
    return getattr(f, "__qualname__", None) or type(f).__name__


def _choosable(v) -> bool:
    return callable(v) and not (is_variable(v) or is_tensor(v) or isinstance(v, type))


def _same_callable(a, b) -> bool:
    return a is b or isinstance(a, types.MethodType) and a == b  # (`self.f` read twice)


def _paths(a, b, path: tuple):
    return differing_paths(a, b, _choosable, _same_callable, path)


def find(names: tuple, outs: list, tables: dict) -> bool:
    """Add a table for each new place where the two traced branches' values are different
    callables; whether any is new."""
    if len(outs) < 2:
        return False
    n = min(len(names), len(outs[0]), len(outs[1]))
    new = {(i, path) for i in range(n) for path in _paths(outs[0][i], outs[1][i], ())}
    new -= set(tables)
    for place in new:
        tables[place] = []
    return bool(new)


def as_ids(values: list, tables: dict) -> list:
    """A branch's values with the callables at the tables' places as their indices."""
    for (i, path), table in tables.items():
        if i < len(values):
            values[i] = _replace(values[i], path, lambda f, t=table: _index(f, t))
    return values


def _index(f, table: list):
    if not _choosable(f):
        return f
    if type(f) is ChosenCallable:  # (an inner tensor `if` chose it: its indices mapped)
        ks = [_position(g, table) for g in f.table]
        return rt.gather(rt.to_tensor(np.asarray(ks, "int64")), f.index)
    return rt.full([], _position(f, table), "int64")


def _position(f, table: list) -> int:
    k = next((k for k, g in enumerate(table) if g is f or (
        isinstance(f, types.MethodType) and f == g)), None)
    if k is None:
        k = len(table)
        table.append(f)
    return k


def as_items(values: list, tables: dict, src) -> list:
    """The `if`'s outputs with the indices at the tables' places as `ChosenCallable`s."""
    for (i, path), table in tables.items():
        if i < len(values):
            values[i] = _replace(values[i], path, lambda v, t=table: ChosenCallable(
                v, list(t), src) if is_variable(v) else v)
    return values
