"""The `raise` statements of an `except` clause that the program runs (`try_except.py`'s
dispatch): a bare `raise` re-raises the caught exception (`raise <the error>`, the run's
error where the clause may catch several, `_d2s.try_caught_error`), and a clause that raises
first says which error it handles (`_d2s.try_handling`): the new exception's `__context__`,
as Python sets it, or for a bare `raise` the error the run caught."""
from __future__ import annotations

import copy

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)


def clause_body(stmts: list, state: str, code: str, types) -> list:
    """A copy of a handler's statements for the dispatch when the program runs."""
    again = templates.replace_as_expression(
        f"{RESERVED}.try_caught_error(state, code, types)", state=state, code=code,
        types=copy.deepcopy(types))
    body = _reraise(copy.deepcopy(stmts), again)
    if _raises(stmts):  # (the exception handled: the new one's context, or re-raised)
        body = templates.replace(f"{RESERVED}.try_handling(state, code, types)", state=state,
                                 code=code, types=copy.deepcopy(types)) + body
    return body


def _raises(stmts: list) -> bool:
    """Whether a handler's statements (not the functions and classes they define) raise
    (`raise E(...)` or a bare `raise`)."""
    for s in stmts:
        if isinstance(s, gast.Raise):
            return True
        if isinstance(s, SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt) and \
                    _raises(inner):
                return True
        if any(_raises(h.body) for h in getattr(s, "handlers", [])) or any(
                _raises(c.body) for c in getattr(s, "cases", [])):
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
