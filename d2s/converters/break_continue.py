"""`break` and `continue` become flags, so loop bodies are straight-line code that a graph
`while` op can run.

    while i < n:                      _brk_1 = False
        if x[i] > 0:                  while not _brk_1 and i < n:
            break            ->           if x[i] > 0:
        i += 1                                _brk_1 = True
                                          if not _brk_1:
                                              i += 1

A `continue` flag is reset at the top of each iteration. A `for` loop gets `not _brk_1` as its
extra test (the loop converter passes it to `for_loop`). A loop's `else` runs when the loop
ended without `break`: it moves after the loop under `if not _brk_1:`.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.transformer import Base
from . import jumps

HANDLES = (gast.Break, gast.Continue)  # the pass is skipped when none of these is present
CREATES = (gast.If, gast.Assign, gast.Call, gast.Lambda, gast.UnaryOp, gast.BoolOp)
NEEDS_ANALYSIS = False


class BreakContinue(Base):
    def _loop(self, node):
        node = self.generic_visit(node)  # inner loops own their jumps: convert them first
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
