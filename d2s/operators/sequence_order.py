"""Ordering comparisons of lists and tuples holding values the converted code computes
(issue 35): `tuple(x.tolist()) < (1.5, 0.0)`, `[loss, step] >= best`. Python compares such
sequences item by item: the first pair that is not equal (`==`) decides by its own `<`, and
where all are equal the lengths decide. Python asks for the truth of each item's `==`, which
only the run knows, so the converter hands a comparison with a list or tuple written on
either side (a display, `tuple(...)`, `list(...)`, `sorted(...)`, `.tolist()`,
`converters/logical.py`) to `seq_order`, which computes the same as graph ops: a 0-d bool
graph value standing for a Python bool.

    (a0, a1) < (b0, b1)   ->   where(a0 == b0, where(a1 == b1, 2 < 2, a1 < b1), a0 < b0)

Anything else is Python's operator.
"""
from __future__ import annotations

import operator
import types

import runtime as rt

from ..errors import ConversionError
from .logical import eq_, ne_
from .made_sets import MadeFrozenSet, MadeSet, set_op
from .variables import is_variable, user_origin, where

_SETS = (set, frozenset, MadeSet, MadeFrozenSet, type({}.keys()), type({}.items()))
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def seq_order(a, op: str, b):
    """`a op b` (`op` one of `<`, `<=`, `>`, `>=`), lexicographic where both are lists (or
    both tuples) holding graph values; Python's operator otherwise."""
    if isinstance(a, _SETS) or isinstance(b, _SETS):  # (a name bound to a tuple and, on
        return set_op(a, op, b)  # another line, to a set: `made_sets`' refusals apply)
    if not _sequences(a, b):
        return _OPS[op](a, b)
    out = _OPS[op](len(a), len(b))  # (every common item equal: the lengths decide)
    for x, y in reversed(list(zip(a, b))):
        same = True if x is y else eq_(x, y)
        if same is True:
            continue
        here = seq_order(x, op, y) if _sequences(x, y) else _OPS[op](x, y)
        if not is_variable(same) and not same:
            out = here
            continue
        out = rt.where(_scalar(same), _scalar(out), _scalar(here))
    if is_variable(out):
        out.python_scalar = True  # (a Python bool when returned)
    return out


# `operator.lt` & co. called through a name (`better = operator.lt if mode == "min" else
# operator.gt`, then `better(cur, best)`): as the operator written (`calls`)
_FUNCTIONS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
              operator.eq: eq_, operator.ne: ne_}


def comparison_call(f):
    """What converted code calls for `f` where it is `operator.lt` & co. (`seq_order` with its
    operator, `eq_` / `ne_`); None otherwise."""
    op = _FUNCTIONS.get(f) if isinstance(f, types.BuiltinFunctionType) else None
    return op if op is None or callable(op) else lambda a, b: seq_order(a, op, b)


def _sequences(a, b) -> bool:
    return type(a) is type(b) and type(a) in (list, tuple) and _holds_graph(list(a) + list(b))


def _holds_graph(items) -> bool:
    return any(is_variable(v) or type(v) in (list, tuple) and _holds_graph(v) for v in items)


def _scalar(v):
    """A truth value of a pair of items as a 0-d bool tensor; refused for a tensor of more
    than one element (Python would ask for its truth: eager raises)."""
    if not is_variable(v):
        return rt.full([], bool(v), "bool")
    if v.is_array or any(d != 1 for d in v.shape):
        src = user_origin(3)
        raise ConversionError(
            f"an ordering comparison of lists or tuples ({where(src)}) holds a tensor of "
            f"shape {list(v.shape)} where Python needs the truth of one item's comparison "
            "(eager raises too). Compare one-element items (`x.tolist()` gives numbers), or "
            "compare the tensors themselves.", origin=src)
    v = rt.reshape(v, []) if v.shape else v
    return v if v.dtype.name == "bool" else rt.cast(v, "bool")
