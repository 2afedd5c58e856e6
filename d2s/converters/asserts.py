"""`assert test, msg` -> `_d2s.assert_(test, lambda: msg)`; `raise E(...)` ->
`_d2s.raise_(E(...))` (`_d2s.raise_made(lambda: E(f"..."))` with an f-string in it).

A Python test is checked at trace time exactly as `assert` would; a tensor test becomes a
graph assertion checked when the program runs. The message stays lazy, as in Python.

A `raise` reached at trace time outside any graph branch raises right away; inside the body of
a tensor `if` or `while` it becomes a `raise` op that raises the same exception (class and
message) when, and only when, the program runs that branch (`d2s.operators.exceptions`).
A bare `raise` (re-raise in an `except` clause) stays as written. A `raise` in the body of a
`try` with `except` clauses was already rewritten by the `try_except` pass.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base

HANDLES = (gast.Assert, gast.Raise)  # the pass is skipped when none of these is present
CREATES = (gast.Call, gast.Lambda)
NEEDS_ANALYSIS = False


class Asserts(Base):
    def visit_Assert(self, node):
        node = self.generic_visit(node)
        if node.msg is None:
            return templates.replace(f"{RESERVED}.assert_(test)", test=node.test)
        return templates.replace(f"{RESERVED}.assert_(test, lambda: msg)", test=node.test,
                                 msg=node.msg)

    def visit_Raise(self, node):
        node = self.generic_visit(node)
        if node.exc is None:
            return node
        # (an f-string message: made lazily, formatted when the program raises it)
        how = "raise_made(lambda: exc" if any(
            isinstance(n, gast.JoinedStr) for n in gast.walk(node.exc)) else "raise_(exc"
        if node.cause is None:
            return templates.replace(f"{RESERVED}.{how})", exc=node.exc)
        return templates.replace(f"{RESERVED}.{how}, cause)", exc=node.exc,
                                 cause=node.cause)


def transform(node, ctx):
    return Asserts(ctx).visit(node)
