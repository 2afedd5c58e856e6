"""`return` anywhere but the last statement becomes an assignment, so branch and loop bodies
never return from the user's function.

Tail returns (the last statement, or the last of both branches of a final `if`, after the
early-return converter) become `_retval = value` with one `return _retval` at the end. Other
returns (inside loops, or followed by code) use a flag as for `break`:

    for v in xs:                      _do_return = False
        if v > 0:                     _retval = None
            return v         ->       for v in xs:          # extra test: not _do_return
    return 0                              if v > 0:
                                              _do_return = True
                                              _retval = v
                                      if not _do_return:
                                          _retval = 0
                                      return _retval
"""
from __future__ import annotations

import gast

from ..pyct import anno, templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base
from . import finally_returns, jumps
from .early_return import always_exits
from .try_except import DISCARDS_RETURN

HANDLES = (gast.Return,)  # the pass is skipped when none of these is present
CREATES = (gast.If, gast.Assign, gast.Call, gast.Lambda, gast.UnaryOp, gast.BoolOp)
NEEDS_ANALYSIS = False


def _tail_returns(stmts: list) -> int:
    """How many returns sit in tail position, or -1 if a return is anywhere else."""
    if not stmts:
        return 0
    head, last = stmts[:-1], stmts[-1]
    if jumps.count_returns(head):
        return -1
    if isinstance(last, gast.Return):
        return 1
    if isinstance(last, gast.If) and not jumps.count_returns([last.test]):
        a, b = _tail_returns(last.body), _tail_returns(last.orelse)
        return -1 if a < 0 or b < 0 else a + b
    return -1 if jumps.count_returns([last]) else 0


def _assign_tail(stmts: list, retval: str) -> list:
    last = stmts[-1] if stmts else None
    if isinstance(last, gast.Return):
        value = last.value or templates.const(None)
        assign = templates.replace("retval = value", retval=retval, value=value)
        anno.copyanno(last, assign[0], anno.ORIGIN)  # (an error in `value`: the return's line)
        return stmts[:-1] + assign
    if isinstance(last, gast.If):
        last.body = _assign_tail(last.body, retval)
        last.orelse = _assign_tail(last.orelse, retval)
    return stmts


class ReturnStatements(Base):
    def visit_FunctionDef(self, node):
        node = self._returns(node)
        exit_ = getattr(node, "d2s_fn_exit", None)  # the `try` pass's `_d2s.fn_exit(...)`
        if exit_ is not None and node.body and isinstance(node.body[-1], gast.Return):
            node.body[-1:-1] = exit_[0]
            del node.d2s_fn_exit
        return node

    def _returns(self, node):
        node = self.generic_visit(node)  # nested functions own their returns
        body = node.body
        count = jumps.count_returns(body)
        if count == 0 or (count == 1 and isinstance(body[-1], gast.Return)):
            return node
        retval = self.ctx.namer.new_plain("retval")
        anno.setanno(node, anno.RETURN_VALUE, retval)  # (the line map's `return_values`)
        exit_ = getattr(node, "d2s_fn_exit", None)
        # a function converted for a `try` body: a path that failed sets no return value
        # (the caller never reads it): placeholder zeros, if the user's code always returns
        exits = exit_[1] if exit_ is not None else always_exits(body)
        init = [] if exits else templates.replace("retval = None", retval=retval)
        if _tail_returns(body) > 0:
            node.body = init + _assign_tail(body, retval) + templates.replace(
                "return retval", retval=retval)
            return node
        flag = self.ctx.namer.new_plain("do_return")

        def on_jump(s):
            value = s.value or templates.const(None)
            return templates.replace("flag = True\nretval = value", flag=flag, retval=retval,
                                     value=value)

        # A function that may fall through returns None there: `_retval` starts as None. One
        # that always ends in return/raise starts it unbound (a placeholder that only paths
        # which already returned leave behind, so a tensor `if` may fill it).
        start = templates.replace("retval = None", retval=retval) if not exits else \
            templates.replace(f"retval = {RESERVED}.Undefined(name)", retval=retval,
                              name=templates.const(retval))
        finally_returns.refresh_returns(body, flag, retval)
        node.body = (templates.replace("flag = False", flag=flag) + start
                     + jumps.rewrite(body, gast.Return, flag, into_loops=True, on_jump=on_jump,
                                   fresh=lambda: self.ctx.namer.new("fin_return"))
                     + templates.replace("return retval", retval=retval))
        for loop in gast.walk(node):
            if isinstance(loop, (gast.For, gast.While)) and _sets(loop, flag):
                jumps.stop_loop(loop, flag)
        for n in gast.walk(node):  # a jump in a `finally` ends the pending return
            for field in ("body", "orelse", "finalbody"):
                stmts = getattr(n, field, None)
                if isinstance(stmts, list) and any(getattr(x, DISCARDS_RETURN, False)
                                                   for x in stmts):
                    setattr(n, field, [templates.replace("flag = False", flag=flag)[0]
                                       if getattr(x, DISCARDS_RETURN, False) else x
                                       for x in stmts])
        return node


def _sets(loop, flag: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == flag and isinstance(n.ctx, gast.Store)
               for n in gast.walk(loop))


def transform(node, ctx):
    return ReturnStatements(ctx).visit(node)
