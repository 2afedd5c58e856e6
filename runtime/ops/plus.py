"""`+` on tensors: the elementwise `add`, or a list concatenation where one side is a static
tensor array (a Python list that converted code made one). Its own module: it needs both
`math` and `arrays`, which must not import each other.
"""
from __future__ import annotations

from .. import core
from .arrays import array_joined
from .elementwise import reflected
from .math import add


def plus(x, y):
    """`x + y`."""
    if (core.is_variable(x) and x.kind == "array") or (
            core.is_variable(y) and y.kind == "array"):
        return array_joined(x, y)
    return add(x, y)


METHODS = {"__add__": plus, "__radd__": reflected(plus)}
