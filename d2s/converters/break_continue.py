"""`break` and `continue` become flags, so loop bodies are straight-line code that a graph
`while` op can run.

    while i < n:                      _brk_1 = False
        if x[i] > 0:                  while not _brk_1 and i < n:
            break            ->           if x[i] > 0:
        i += 1                                _brk_1 = True
                                          if not _brk_1:
                                              i += 1

A `continue` flag is reset at the top of each iteration. A `while` test with a walrus
becomes `while True:` with the test as a `break` at the top of the body. A `for` loop gets `not _brk_1` as its
extra test (the loop converter passes it to `for_loop`). A loop's `else` runs when the loop
ended without `break`: it moves after the loop under `if not _brk_1:`.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.transformer import Base
from . import jumps

HANDLES = (gast.Break, gast.Continue, gast.NamedExpr)  # skipped when none is present
CREATES = (gast.If, gast.Assign, gast.Call, gast.Lambda, gast.UnaryOp, gast.BoolOp)
NEEDS_ANALYSIS = False


class BreakContinue(Base):
    def _loop(self, node):
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
                on_jump=lambda s: jumps.set_flag(flag))
        if jumps.contains(node.body, gast.Break, into_loops=False):
            flag = self.ctx.namer.new("brk")
            node.body = jumps.rewrite(node.body, gast.Break, flag, into_loops=False,
                                      on_jump=lambda s: jumps.set_flag(flag))
            pre = templates.replace("flag = False", flag=flag)
            jumps.stop_loop(node, flag)
            if node.orelse:
                post = templates.replace("if not flag:\n    orelse", flag=flag,
                                         orelse=node.orelse)
                node.orelse = []
        return pre + [node] + post

    visit_While = _loop
    visit_For = _loop


def transform(node, ctx):
    return BreakContinue(ctx).visit(node)
