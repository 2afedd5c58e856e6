"""Which `try` statements may catch the `ZeroDivisionError` of a division by a Python number
the program computes (`runtime.program.zero_division`), and which expressions divide: after
such a statement in such a `try` body the converter collects the error
(`operators.try_except.TryState.take_read_error`), as it does for lookups."""
from __future__ import annotations

import gast

# clause classes that catch a ZeroDivisionError, beside those that catch lookup errors too
# (`Exception`, a bare `except`, a name the converter cannot see through)
_CATCHING = frozenset(("ZeroDivisionError", "ArithmeticError"))
_DIVIDING = (gast.Div, gast.FloorDiv, gast.Mod)


def may_catch_division(handlers) -> bool:
    """Whether one of the `except` clauses names ZeroDivisionError or ArithmeticError."""
    for h in handlers:
        types = h.type.elts if isinstance(h.type, gast.Tuple) else [h.type]
        for t in types:
            name = t.attr if isinstance(t, gast.Attribute) else getattr(t, "id", None)
            if name in _CATCHING:
                return True
    return False


def divides(node) -> bool:
    """Whether expression `node` holds a `/`, `//`, `%` or a `divmod()` call."""
    for n in gast.walk(node):
        if isinstance(n, gast.BinOp) and isinstance(n.op, _DIVIDING):
            return True
        if isinstance(n, gast.Call) and getattr(n.func, "id", getattr(
                n.func, "attr", None)) in ("divmod", "divmod_"):
            return True
    return False
