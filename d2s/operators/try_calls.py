"""Calls made inside an open `try` body after an earlier call of the same statement may have
failed at run time (`a(x) + b(x)`, `g(a(x))`): eager code never reaches them after the
exception, so the call is traced under a graph `if` that runs it only where nothing failed
(`after_failure`, which `calls.call` and `switch.call_item` wrap around the callee).
"""
from __future__ import annotations

import runtime as rt

from ..errors import ConversionError
from .block_values import stand_in
from .control_flow import ifelse
from .try_except import TryState, current_block, deposit, may_have_failed, open_trys, try_collect
from .variables import is_variable, user_origin, where


def _nothing_failed(state: TryState):
    """Python True when no call made earlier in the statement being traced may have failed;
    else a bool graph value, true where none of them failed when the program runs."""
    here = current_block()
    ok = True
    for _inner, code, block, _src in state.pending:
        if block is not here or not may_have_failed(code):
            continue  # (another block: `try_collect` refuses it)
        this = code == 0 if is_variable(code) else rt.zeros([], "bool")
        ok = this if ok is True else rt.logical_and(ok, this)
    return ok


def after_failure(fn):
    """`fn` (a user function, method or Layer called inside an open `try` body or a
    function converted for one) as the call runs: when a call made before it in the same
    statement may have failed at run time (`a(x) + b(x)`, `g(a(x))`), it is traced under
    a graph `if` that runs it only where nothing failed, as eager code never reaches it after
    the exception (its writes to Layer state and lists, its own errors); on the other path
    zeros stand in for its result (never read: the statement does not finish)."""
    def run(*args, **kwargs):
        stack = open_trys()
        if not stack or not stack[-1].pending:
            return fn(*args, **kwargs)
        outer = stack[-1]
        ok = _nothing_failed(outer)
        if ok is True:
            return fn(*args, **kwargs)
        errors, box = TryState(), []

        def take(out, code):
            mark = len(outer.pending)
            out = fn(*args, **kwargs)
            if len(outer.pending) > mark:
                errors.pending, outer.pending[mark:] = outer.pending[mark:], []
                code = try_collect(errors, code)
            box[:] = [out]
            return out, code

        def skip(out, code):
            return stand_in(box[0]), code

        try:
            out, code = ifelse(ok, take, skip, (None, 0), ("<call result>", "<error code>"))
        except ConversionError as e:
            src = user_origin()
            raise type(e)(
                f"{e}\n(d2s: the call at {where(src)} is made only where the calls before it "
                "in the same statement did not fail when the program runs, as eager code "
                "stops at the first error: it becomes a graph `if`, and this change cannot "
                "be made in one. Call it in a statement of its own.)",
                origin=getattr(e, "origin", None) or src) from e
        if may_have_failed(code):
            deposit(errors, code)
        return out
    return run
