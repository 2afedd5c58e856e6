"""`break` and `continue` become flags, so loop bodies are straight-line code that a graph
`while` op can run.

    while i < n:                      _brk_1 = False
        if x[i] > 0:                  while not _brk_1 and i < n:
            break            ->           if x[i] > 0:
        i += 1                                _brk_1 = True
                                          if not _brk_1:
                                              i += 1

A `continue` flag is reset at the top of each iteration. A `while` test with a walrus
becomes `while True:` with the test as a `break` at the top of the body; with an `else`, the
test is computed before the loop and at the end of the body instead. A `for` loop gets `not _brk_1` as its
extra test (the loop converter passes it to `for_loop`). A loop's `else` runs when the loop
ended without `break`: it moves after the loop under `if not _brk_1:`.
"""
from __future__ import annotations

import copy

import gast

from ..pyct import anno, templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base
from . import jumps

HANDLES = (gast.Break, gast.Continue, gast.NamedExpr)  # skipped when none is present
CREATES = (gast.If, gast.Assign, gast.Call, gast.Lambda, gast.UnaryOp, gast.BoolOp)
NEEDS_ANALYSIS = True  # DEFINED_IN: names bound before a loop with `else` (see `_pending`)


class BreakContinue(Base):
    def _loop(self, node):
        defined = anno.getanno(node, anno.DEFINED_IN, frozenset())
        node = self.generic_visit(node)  # inner loops own their jumps: convert them first
        if isinstance(node, gast.While) and not node.orelse and any(
                isinstance(n, gast.NamedExpr) for n in gast.walk(node.test)):
            # `while (s := f()) < 10:` -> `while True: if not (s := f()) < 10: break`, so the
            # walrus binds `s` in the loop body, where it is loop state like any other name.
            node.body = templates.replace("if not test:\n    break", test=node.test) + node.body
            node.test = templates.const(True)
        pre, post = [], []
        if jumps.contains(node.body, gast.Continue, into_loops=False):
            flag = self.ctx.namer.new("cont")
            node.body = templates.replace("flag = False", flag=flag) + jumps.rewrite(
                node.body, gast.Continue, flag, into_loops=False,
                on_jump=lambda s: jumps.set_flag(flag), fresh=lambda: self.ctx.namer.new("fin"))
        if isinstance(node, gast.While) and node.orelse and any(
                isinstance(n, gast.NamedExpr) for n in gast.walk(node.test)):
            pre = _test_before_trips(node, self.ctx.namer.new("test"))
        if jumps.contains(node.body, gast.Break, into_loops=False):
            breaking = [list(node.body)]  # before the rewrite: where each break sits
            flag = self.ctx.namer.new("brk")
            node.body = jumps.rewrite(node.body, gast.Break, flag, into_loops=False,
                                      on_jump=lambda s: jumps.set_flag(flag),
                                      fresh=lambda: self.ctx.namer.new("fin"))
            pre += templates.replace("flag = False", flag=flag)
            jumps.stop_loop(node, flag)
            if node.orelse:
                pre += _pending(node, defined, breaking)
                post = templates.replace("if not flag:\n    orelse", flag=flag,
                                         orelse=node.orelse)
                node.orelse = []
        return pre + [node] + post

    visit_While = _loop
    visit_For = _loop


def _test_before_trips(node, name: str) -> list:
    """`while (k := f()) < n: ... else: ...` -> `_test_1 = (k := f()) < n` before the loop and
    as the body's last statement (after the `continue` rewrite: a `continue` skips to it),
    `while _test_1:`: the walrus binds `k` where code after the loop reads it, and the `else`
    stays the loop's (a `break` in the test's place would skip it). Returns the statement
    before the loop."""
    node.body = node.body + templates.replace("name = test", name=name, test=node.test)
    first = templates.replace("name = test", name=name, test=copy.deepcopy(node.test))
    node.test = gast.Name(name, gast.Load(), None, None)
    return first


def _pending(loop, defined, breaking: list) -> list:
    """`name = _d2s.Pending('name')` before a loop with `break` and `else` for each name the
    `else` binds, that is unbound before the loop and bound before every `break`: afterwards
    it is bound on every path, so a tensor `if` inside the loop may leave it unbound."""
    names = sorted({n.id for s in loop.orelse for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)})
    return [stmt for name in names if (name not in defined or not _read_in(loop, name)) and
            _bound_before_breaks(breaking[0], name, False) for stmt in templates.replace(
        f"name = {RESERVED}.Pending(label)", name=name, label=templates.const(name))]


def _read_in(loop, name: str) -> bool:
    """Whether the loop (its test or iterable, its body) reads `name`: a value bound before
    the loop (or by an outer loop's last trip) that it never reads is dead once the `else`
    or a `break` path binds the name again."""
    parts = [loop.test if isinstance(loop, gast.While) else loop.iter] + loop.body + \
        loop.orelse
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load) or
               isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and
               n.target.id == name for part in parts for n in gast.walk(part))


def _binds(stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target] if isinstance(
        stmt, (gast.AugAssign, gast.AnnAssign)) else []
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for t in targets for n in gast.walk(t))


def _bound_before_breaks(stmts: list, name: str, bound: bool) -> bool:
    """Whether every `break` of this loop in `stmts` follows an assignment to `name` on its
    path (direct assignments only: a conservative check)."""
    for s in stmts:
        if isinstance(s, gast.Break):
            return bound
        if _binds(s, name):
            bound = True
        elif isinstance(s, (gast.For, gast.While)):
            if jumps.contains(s.orelse, gast.Break, into_loops=False) and not \
                    _bound_before_breaks(s.orelse, name, bound):
                return False
        elif isinstance(s, (gast.If, gast.With, gast.Try)):
            for block in (getattr(s, "body", []), getattr(s, "orelse", []),
                          getattr(s, "finalbody", []),
                          *[h.body for h in getattr(s, "handlers", [])]):
                if not _bound_before_breaks(block, name, bound):
                    return False
        elif isinstance(s, gast.Match):
            if not all(_bound_before_breaks(c.body, name, bound) for c in s.cases):
                return False
    return True


def transform(node, ctx):
    return BreakContinue(ctx).visit(node)
