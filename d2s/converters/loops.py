"""`while` and `for` loops (with `else`).

    while i < n:                  def _loop_test_1(i, y):
        y = y + 1                     return i < n
        i += 1           ->       def _loop_body_1(i, y):
                                      y = y + 1
                                      i += 1
                                      return i, y
                                  i, y = _d2s.while_loop(_loop_test_1, _loop_body_1, (i, y), ('i', 'y'))

    for v in xs:                  def _for_body_2(v, s):
        s = s + v        ->           s = s + v
                                      return s
                                  s = _d2s.for_loop(xs, _for_body_2, (s,), ('s',), None)

The state is what the body binds that is loop-carried or live after the loop. A `for` target
that is live after the loop is state too (the body receives the item as `_itr_k` and binds
it). `break`, `continue` and `return` were already turned into flags by earlier converters;
a flag that must stop a `for` is its extra test (`anno.EXTRA_TEST`), passed as a function.
With no `break` left, a loop's `else` always runs after it, so it simply follows the call.
"""
from __future__ import annotations

import gast

from ..pyct import anno, templates
from ..pyct.activity import written
from ..pyct.naming import RESERVED
from ..pyct.qnames import is_composite
from ..pyct.transformer import Base
from . import state

HANDLES = (gast.For, gast.While)  # the pass is skipped when none of these is present
CREATES = (gast.FunctionDef, gast.Call, gast.Return, gast.Assign)
NEEDS_ANALYSIS = True


class Loops(state.ScopeTracker, Base):
    def _state(self, node, candidates, targets=frozenset()):
        live = anno.getanno(node, anno.LOOP_LIVE, frozenset())
        live = live | (state.live_in(node.body, live) - targets)
        # a name the body binds that a closure reads (`fns.append(lambda: v + v)`, a helper
        # reading the loop's counter) is the user function's one variable, rebound by every
        # trip: loop state, never a variable of the body's own per trip
        live = live | (candidates & self.ctx.cells)
        return state.State(state.choose(self.state_candidates(candidates), live),
                           self.ctx.namer, cells=self.ctx.cells)

    def visit_While(self, node):
        defined = anno.getanno(node, anno.DEFINED_IN, frozenset())
        node = self.generic_visit(node)
        _check_no_jumps(node)
        st = self._state(node, written(node.body))
        test_name = self.ctx.namer.new("loop_test")
        body_name = self.ctx.namer.new("loop_body")
        test_fn = st.function(test_name, templates.replace("return test", test=node.test),
                              returns=False)
        unread = _unread(node, st.names, [gast.Expr(value=node.test)] + node.body)
        call = templates.replace_as_expression(
            f"{RESERVED}.while_loop(test_fn, body_fn, args, names{', unread' if unread else ''})",
            test_fn=test_name, body_fn=body_name, args=st.args(), names=st.names_const(),
            unread=templates.const(unread))
        return (state.undefined_inits(st.names, defined)
                + [test_fn, st.function(body_name, node.body)] + st.assign(call) + node.orelse)

    def visit_For(self, node):
        defined = anno.getanno(node, anno.DEFINED_IN, frozenset())
        extra = anno.getanno(node, anno.EXTRA_TEST, None)
        node.body = [s for s in node.body if not anno.getanno(s, anno.LOOP_GUARD, False)]
        node = self.generic_visit(node)
        _check_no_jumps(node)
        targets = written(node.target)
        st = self._state(node, written(node.body) | targets, targets)
        body_name = self.ctx.namer.new("for_body")
        body = node.body
        if isinstance(node.target, gast.Name) and node.target.id not in st.names:
            item = node.target.id
        else:
            item = self.ctx.namer.new("itr")
            body = templates.replace("target = item", target=node.target, item=item) + body
        out = state.undefined_inits(st.names, defined)
        extra_name = templates.const(None)
        if extra is not None:
            extra_name = self.ctx.namer.new("loop_test")
            out.append(st.function(extra_name, templates.replace("return test", test=extra),
                                   returns=False))
        out.append(st.function(body_name, body, first_params=[item]))
        unread = _unread(node, st.names, ([] if extra is None else [gast.Expr(value=extra)])
                         + body)
        call = templates.replace_as_expression(
            f"{RESERVED}.for_loop(iter_, body_fn, args, names, extra"
            f"{', unread' if unread else ''})", iter_=node.iter,
            body_fn=body_name, args=st.args(), names=st.names_const(), extra=extra_name,
            unread=templates.const(unread))
        return out + st.assign(call) + node.orelse


def _unread(loop, names: list, runs: list) -> tuple:
    """The state names whose value on entry the loop never reads: `runs` (its test, then its
    body) binds them first on every path (a value bound on some paths only before the loop
    is then not read by it; only after a loop that ran zero times)."""
    live = anno.getanno(loop, anno.LOOP_LIVE, frozenset())
    read = state.live_in(runs, live)
    return tuple(n for n in names if not is_composite(n) and n not in read)


def _check_no_jumps(loop) -> None:
    """Earlier converters removed break/continue; one left here is a d2s bug."""
    stack = list(loop.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.Break, gast.Continue)):
            raise TypeError("d2s bug: break/continue left for the loop converter")
        if not isinstance(n, (gast.For, gast.While, gast.FunctionDef, gast.Lambda)):
            stack.extend(gast.iter_child_nodes(n))


def transform(node, ctx):
    return Loops(ctx).visit(node)
