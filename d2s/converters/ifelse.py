"""`if`/`elif`/`else` statements and conditional expressions.

    if x > 0:                         def _if_true_1(y):
        y = x * 2                         y = x * 2
    else:                      ->         return y
        y = -x                        def _if_false_1(y):
                                          y = -x
                                          return y
                                      y = _d2s.ifelse(x > 0, _if_true_1, _if_false_1, (y,), ('y',))

The state is the names either branch binds that are live afterwards (or read in a branch
before being bound there). `a if c else b` becomes `_d2s.ifexp(c, lambda: a, lambda: b)`.
`elif` is an `if` in the `else` branch, so inner statements are converted first.
"""
from __future__ import annotations

import gast

from ..errors import ConversionError
from ..pyct import activity, anno, templates
from ..pyct.activity import written
from ..pyct.naming import RESERVED
from ..pyct.qnames import is_composite
from ..pyct.transformer import Base
from ..pyct.walk import NAME_FIELDS, walk
from . import state

HANDLES = (gast.If, gast.IfExp)  # the pass is skipped when none of these is present
CREATES = (gast.FunctionDef, gast.Call, gast.Lambda, gast.Return, gast.Assign)
NEEDS_ANALYSIS = True


def _reaching_names(body: list, settled: dict) -> set:
    """Names through which a branch may change a set in place: receivers of method calls
    (`seen.add(k)`, `box.track(k)`) and names inside the arguments of calls
    (`tag(seen, k)`, `update(state=box)`). `settled`: statement -> its names, for
    statements that no longer change (converted: an inner `if`'s branches, which the
    outer one's hold again, each `elif` one level deeper)."""
    out = set()
    for stmt in body:
        out |= _reaching_of(stmt, settled)
    return out


def _reaching_of(stmt, settled: dict) -> frozenset:
    """`_reaching_names([stmt])`. One walk: each node carries whether it lies in a call's
    arguments (a walk per argument visited the arguments twice, and nested calls' as often
    as they nest); the statements in it are answered by their own (kept) answers."""
    found = settled.get(stmt)
    if found is not None:
        return found
    out = set()
    stack = [(stmt, False)]
    pop, push = stack.pop, stack.append
    name_cls, call_cls, attr_cls, ast_type = gast.Name, gast.Call, gast.Attribute, gast.AST
    stmt_type, fields_of = gast.stmt, NAME_FIELDS  # (contexts and operators hold no name)
    while stack:
        n, in_args = pop()
        cls = n.__class__
        if cls is name_cls:
            if in_args:
                out.add(n.id)
            if n.annotation is not None:
                push((n.annotation, in_args))
            continue
        if cls is call_cls:
            f = n.func
            if f.__class__ is attr_cls and f.value.__class__ is name_cls:
                out.add(f.value.id)
            push((f, in_args))
            for a in n.args:
                push((a, True))
            for k in n.keywords:
                push((k.value, True))
            continue
        for field in fields_of[cls]:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, stmt_type):  # (never inside a call's arguments)
                        out |= _reaching_of(x, settled)
                    elif isinstance(x, ast_type):
                        push((x, in_args))
            elif isinstance(v, ast_type):
                push((v, in_args))
    found = settled[stmt] = frozenset(out)
    return found


class IfElse(state.ScopeTracker, Base):
    def visit_If(self, node):
        live_out = anno.getanno(node, anno.LIVE_OUT, frozenset())
        defined = anno.getanno(node, anno.DEFINED_IN, frozenset())
        node = self.generic_visit(node)
        candidates = self.state_candidates(written(node.body) | written(node.orelse))
        live = live_out | state.live_in(node.body, live_out) | state.live_in(node.orelse,
                                                                             live_out)
        st = state.State(state.choose(candidates, live), self.ctx.namer, defined,
                         self.ctx.cells)
        true_name = self.ctx.namer.new("if_true")
        false_name = self.ctx.namer.new("if_false")
        # names of objects through which the branches may change a set in place that code
        # after the `if` reads (a local a closure reads, `cells`, any time it is called): if
        # the branches leave such a set holding other items, the `if` refuses it
        # (`branch_sets.set_values`; no read of it after the `if` could be decided)
        reaching = _reaching_names(node.body, self.settled) | _reaching_names(
            node.orelse, self.settled)
        read_after = tuple(sorted((reaching & live_out | self.ctx.cells)
                                  - set(st.names) - {RESERVED}))
        # names the branches bind that no code after the `if` reads (`t = rt.stack([t, t])`
        # in one branch, a temporary read by the other): their values may differ in rank,
        # dtype or kind between the paths, as in eager code, since nothing sees them after
        dead = tuple(n for n in st.names if not is_composite(n) and n not in live_out
                     and n not in self.ctx.cells)
        call = templates.replace_as_expression(
            f"{RESERVED}.ifelse(test, true_fn, false_fn, args, names"
            f"{', read_after' if read_after or dead else ''}{', dead' if dead else ''})",
            test=node.test, true_fn=true_name, false_fn=false_name, args=st.args(),
            names=st.names_const(), read_after=templates.const(read_after),
            dead=templates.const(dead))
        return ([st.function(true_name, node.body, returns=bool(st)),
                   st.function(false_name, node.orelse or ([] if st else templates.replace(
                       "pass")), returns=bool(st))]
                + st.assign(call))

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        if any(isinstance(n, gast.NamedExpr) for b in (node.body, node.orelse)
               for n in gast.walk(b)):  # (a branch function would bind the name itself)
            origin = anno.getanno(node, anno.ORIGIN, None)
            at = f'File "{origin.filename}", line {origin.lineno}: ' \
                f"{origin.source_line.strip()}" if origin is not None else "unknown line"
            raise ConversionError(
                f"({at}) a walrus (`:=`) in a branch of a conditional expression inside a "
                "lambda, a comprehension or another expression d2s cannot turn into "
                "statements: the name would be bound in a function of its own. Write an `if` "
                "statement, or bind the name before the expression.", origin=origin)
        return templates.replace_as_expression(
            f"{RESERVED}.ifexp(test, lambda: body, lambda: orelse)", test=node.test,
            body=node.body, orelse=node.orelse)


def transform(node, ctx):
    converter = IfElse(ctx)
    # Only a conditional expression needs a visit below statements.
    # (`ctx.present`, when the transpiler gives it, holds every node type of `node`: a
    # function that never had a conditional expression needs no walk to tell)
    present = getattr(ctx, "present", None)
    converter.skip_expressions = (present is not None and gast.IfExp not in present) or \
        not any(isinstance(n, gast.IfExp) for n in walk(node))
    # (what `visit_If` reads of the code, it has converted: the defs and statements in it
    # stay as they are until the pass ends, and nested ifs read them again)
    converter.settled = {}
    with activity.settled_defs():
        return converter.visit(node)
