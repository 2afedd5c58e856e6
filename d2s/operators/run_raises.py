"""Eager's exception, raised when the program runs and a graph condition holds: a text
operation that raises for one of the strs the run may choose (`None.upper()` of a label a
tensor `if` made None: `chosen_text`), a table index out of range or a key that is no key of
the table (`python_picks`). The exception's class and message are eager's; a `KeyError`
whose key only the run knows gets the run's key as its argument (`KeyError: 7`, as eager's).
"""
from __future__ import annotations

import os

import runtime as rt
from runtime.program.debug_ops import raise_error

from .variables import user_origin


def raise_when(bad, error: BaseException, value=None) -> None:
    """Raise `error` where the bool graph value `bad` holds, at the user's line; `value`: a
    0-d graph value whose Python value is the exception's one argument on that run."""
    src = user_origin()
    at = f"{os.path.basename(src.filename)}:{src.lineno}" if src is not None else ""

    def raised():
        raise_error(error, at=at, value=value)
    rt.static.nn.cond(bad, raised, lambda: None)
