"""Early return: the statements after `if c: ... return` move into its `else` (not after an
`if` whose block only raises).

    if x > 0:                         if x > 0:
        return a           ->             return a
    y = x - 1                         else:
    return y                              y = x - 1
                                          return y

Runs first: afterwards most functions return only in tail position, which the return
converter turns into one readable `_retval` assignment per branch instead of flags.
"""
from __future__ import annotations

import gast

from ..pyct.transformer import Base
from . import jumps

HANDLES = (gast.Return,)  # the pass is skipped when none of these is present
CREATES = ()
NEEDS_ANALYSIS = False


def always_exits(stmts: list) -> bool:
    """Whether every path through `stmts` ends in `return` or `raise`."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return True
    if isinstance(last, gast.If):
        return always_exits(last.body) and always_exits(last.orelse)
    if isinstance(last, gast.With):  # (a `raise` the context manager may suppress: not one)
        return always_exits(last.body) and not jumps.contains(last.body, gast.Raise,
                                                              into_loops=True)
    if isinstance(last, gast.Try):
        return try_exits(last)
    if isinstance(last, gast.Expr) and getattr(last, "d2s_exits", False):
        return True  # the re-raise after a converted `try` whose every path exits
    if isinstance(last, gast.While):  # `while True:` without a break only ends by a return
        return (isinstance(last.test, gast.Constant) and last.test.value is True
                and not jumps.contains(last.body, gast.Break, into_loops=False))
    return False


def try_exits(node) -> bool:
    """Whether every path through a `try` statement ends in `return` or `raise`."""
    return (always_exits(node.body) or always_exits(node.orelse)) and all(
        always_exits(h.body) for h in node.handlers) or always_exits(node.finalbody)


def _returns(stmts: list) -> bool:
    """Whether every path through `stmts` exits, some by `return`. A block that only raises
    (`if not rt.isfinite(loss): raise ...`) keeps the rest after its `if`, as written: a
    tensor condition's raise happens when the program runs, and the rest (`loss.backward()`)
    stays outside the branch."""
    return always_exits(stmts) and jumps.contains(stmts, gast.Return, into_loops=True)


def move_rest(stmts: list) -> list:
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, gast.With):  # (its body is a block of its own: `if c: return`)
            s.body = move_rest(s.body)
        if isinstance(s, gast.If):
            s.body = move_rest(s.body)
            s.orelse = move_rest(s.orelse)
            rest = stmts[i + 1:]
            if rest and _returns(s.body) and not always_exits(s.orelse):
                s.orelse = move_rest(s.orelse + rest)
                return out + [s]
            if rest and s.orelse and _returns(s.orelse) and not always_exits(s.body):
                s.body = move_rest(s.body + rest)
                return out + [s]
        out.append(s)
    return out


class EarlyReturn(Base):
    def visit_FunctionDef(self, node):
        node = self.generic_visit(node)
        node.body = move_rest(node.body)
        return node


def transform(node, ctx):
    return EarlyReturn(ctx).visit(node)
