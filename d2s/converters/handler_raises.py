"""The `raise` statements of an `except` clause that the program runs (`try_except.py`'s
dispatch): a bare `raise` re-raises the caught exception (`raise <the error>`), and a clause
that raises an exception of its own first says which one it handles
(`_d2s.try_handling`), the new exception's `__context__`, as Python sets it."""
from __future__ import annotations

import copy

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)


def clause_body(stmts: list, error, state: str, code: str, types) -> list:
    """A copy of a handler's statements for the dispatch when the program runs."""
    body = _reraise(copy.deepcopy(stmts), error)
    if _raises_new(stmts):  # (the exception handled is the new one's context)
        body = templates.replace(f"{RESERVED}.try_handling(state, code, types)", state=state,
                                 code=code, types=copy.deepcopy(types)) + body
    return body


def _raises_new(stmts: list) -> bool:
    """Whether a handler's statements (not the functions and classes they define) raise an
    exception of their own (`raise E(...)`, not a bare `raise`)."""
    for s in stmts:
        if isinstance(s, gast.Raise) and s.exc is not None:
            return True
        if isinstance(s, SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt) and \
                    _raises_new(inner):
                return True
        if any(_raises_new(h.body) for h in getattr(s, "handlers", [])) or any(
                _raises_new(c.body) for c in getattr(s, "cases", [])):
            return True
    return False


def _reraise(stmts: list, error) -> list:
    """A handler's bare `raise` re-raises the caught exception (`raise <error>`)."""
    def fix(block):
        for i, s in enumerate(block):
            if isinstance(s, gast.Raise) and s.exc is None:
                block[i] = gast.Raise(exc=copy.deepcopy(error), cause=None)
                continue
            if isinstance(s, SCOPES):
                continue
            for field in ("body", "orelse", "finalbody"):  # not nested handlers: their own
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    fix(inner)
            for case in getattr(s, "cases", []):
                fix(case.body)
    fix(stmts)
    return stmts
