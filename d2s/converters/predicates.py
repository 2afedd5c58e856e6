"""Tensor predicates in positions Python evaluates inside an expression or a `match`:
rewritten into statements the `if` converter can turn into `cond` ops. Used by `logical`.

A walrus in a later operand of `and`/`or` in an `if` test (it binds only when that operand
is evaluated):

    if a or (m := f(x)) > 1:            _bool_1 = _d2s.truth(a)
        ...                      ->     if not _bool_1:
                                            _bool_1 = _d2s.truth((m := f(x)) > 1)
                                        if _bool_1:
                                            ...

The same anywhere else a statement evaluates an expression (an assignment, a `return`, an
expression statement): an `and`/`or` with a walrus in a later operand, at a position Python
always evaluates, is computed by statements before it, keeping Python's value (`a and b` is
`a` or `b`); a conditional expression's test is computed as a truth value. The name the walrus
binds is bound after it only where that operand ran, as in Python: a tensor `if` leaves it
bound on one side only (a read where eager would find it unbound raises `UnboundLocalError`
when the program runs), or keeps its previous value on the other side:

    ok = a > 0 and (n := f(x)) < 5      ->     _bool_1 = a > 0
                                               if _bool_1:
                                                   _bool_1 = _d2s.chain_value(
                                                       _bool_1, (n := f(x)) < 5)
                                               ok = _bool_1

A `match` with guards (`case P if <tensor>:`): each case becomes its own `match` under
`if not _matched_1:`, its guard an `if` around the body, so a guard that is false (when the
program runs) goes on to the next case, as Python does:

    match cmd:                          _subject_1 = cmd
        case "a" if x.sum() > 0:        _matched_1 = False
            y = x * 2           ->      match _subject_1:
        case _:                             case "a":
            y = x - 1                           if x.sum() > 0:
                                                    y = x * 2
                                                    _matched_1 = True
                                        if not _matched_1:
                                            match _subject_1:
                                                case _:
                                                    y = x - 1
                                                    _matched_1 = True
"""
from __future__ import annotations

import copy

import gast

from ..pyct import templates
from ..pyct.walk import walk
from ..pyct.naming import RESERVED
from .break_continue import _binds


def _has_walrus(node) -> bool:
    return any(n.__class__ is gast.NamedExpr for n in walk(node))  # (pyct's walk: faster)


def hoist_walrus(node, namer) -> list:
    """Statements to put before `if node.test` (and `node.test` rewritten), or []."""
    test, negate = node.test, False
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        test, negate = test.operand, True
    if not (isinstance(test, gast.BoolOp) and any(_has_walrus(v) for v in test.values[1:])):
        return []
    t = namer.new("bool")
    go_on = "t" if isinstance(test.op, gast.And) else "not t"
    inner = templates.replace(f"t = {RESERVED}.truth(v)", t=t, v=test.values[-1])
    for v in reversed(test.values[1:-1]):
        inner = templates.replace(f"t = {RESERVED}.truth(v)\nif {go_on}:\n    inner", t=t,
                                  v=v, inner=inner)
    pre = templates.replace(f"t = {RESERVED}.truth(v)\nif {go_on}:\n    inner", t=t,
                            v=test.values[0], inner=inner)
    node.test = templates.replace_as_expression("not t" if negate else "t", t=t)
    return pre


_VALUE_FIELDS = {gast.Assign: "value", gast.AugAssign: "value", gast.AnnAssign: "value",
                 gast.Return: "value", gast.Expr: "value"}
_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _later_walrus(node) -> bool:
    return isinstance(node, gast.BoolOp) and any(_has_walrus(v) for v in node.values[1:])


def hoist_value_walrus(stmt, namer) -> list:
    """Statements to put before `stmt` (its expression rewritten), or [] (see the module)."""
    field = _VALUE_FIELDS.get(type(stmt))
    value = getattr(stmt, field, None) if field else None
    if value is None or not _has_walrus(value):
        return []
    pre: list = []
    setattr(stmt, field, _hoist(value, pre, namer, truth=False))
    return pre


def hoist_while_walrus(node, namer) -> list:
    """`while test:` whose test has an and/or with a walrus in a later operand: the test is
    computed (as a truth value) before the loop and again at the end of the body, which the
    jump passes before this one made always reached (`continue` is a flag by now)."""
    if not _has_walrus(node.test):
        return []
    pre: list = []
    test = _hoist(node.test, pre, namer, truth=True)
    if not pre:
        return []
    node.test = test
    node.body = node.body + copy.deepcopy(pre)
    return pre


def _chain(node, pre: list, namer, truth: bool):
    """`a and b or ...` as statements into a fresh name (its value, or its truth)."""
    t = namer.new("bool")
    go_on = "t" if isinstance(node.op, gast.And) else "not t"
    assign = f"t = {RESERVED}.truth(v)" if truth else "t = v"
    later = f"t = {RESERVED}.truth(v)" if truth else f"t = {RESERVED}.chain_value(t, v)"
    inner = templates.replace(later, t=t, v=node.values[-1])
    for v in reversed(node.values[1:-1]):
        inner = templates.replace(f"{later}\nif {go_on}:\n    inner", t=t, v=v,
                                  inner=inner)
    first = _hoist(node.values[0], pre, namer, truth)
    pre += templates.replace(f"{assign}\nif {go_on}:\n    inner", t=t, v=first, inner=inner)
    return templates.name(t)


def _hoist(node, pre: list, namer, truth: bool):
    """`node` with each and/or that has a walrus in a later operand, where Python always
    evaluates it, replaced by a name computed in `pre` (in evaluation order)."""
    if _later_walrus(node):
        return _chain(node, pre, namer, truth)
    if isinstance(node, _SCOPES) or not _has_walrus(node):
        return node
    if isinstance(node, gast.IfExp):  # only the test is always evaluated
        node.test = _hoist(node.test, pre, namer, truth=True)
        if _has_walrus(node.body) or _has_walrus(node.orelse):
            # a walrus in a branch binds only where it runs: an `if` statement
            t = namer.new("ifexp")
            pre += templates.replace("if test:\n    t = a\nelse:\n    t = b", test=node.test,
                                     t=t, a=node.body, b=node.orelse)
            return templates.name(t)
        return node
    if isinstance(node, gast.BoolOp):  # only the first operand is always evaluated
        node.values[0] = _hoist(node.values[0], pre, namer, truth)
        return node
    for name, field in gast.iter_fields(node):
        if isinstance(field, gast.AST):
            setattr(node, name, _hoist(field, pre, namer, False))
        elif isinstance(field, list):
            setattr(node, name, [_hoist(f, pre, namer, False) if isinstance(f, gast.AST)
                                 else f for f in field])
    return node


def filtered_comprehension(node, conv):
    """`[elt for ... for v in xs if c1 if c2]` (also a generator expression) as
    `_d2s.comp_list(lambda _acc: [_acc.item(c1 and c2, lambda v=v: elt) for ... in xs])`
    (see `operators.predicates_comp`); the filters of an earlier `for` become one
    `if _acc.keep(k, cond)` there (a Python value filters in Python; a tensor is a condition
    of every item appended under that iteration). None: no filter, or a walrus (it would
    bind a name of the lambda)."""
    gens = node.generators
    if not any(g.ifs for g in gens) or any(g.is_async for g in gens) or _has_walrus(node):
        return None
    conds = []
    for g in gens:
        ifs, g.ifs = g.ifs, []
        for c in ifs:
            mark_test(c)
        conds.append(_all_of([conv.visit(c) for c in ifs]))
    node = conv.generic_visit(node)
    acc = conv.ctx.namer.new("acc")
    for k, (g, c) in enumerate(zip(gens[:-1], conds[:-1])):
        if c is not None:
            g.ifs = [templates.replace_as_expression("acc.keep(k, c)", acc=acc,
                                                     k=templates.const(k), c=c)]
    for k, g in enumerate(gens):
        if k and any(c is not None for c in conds[:k]) and \
                any(isinstance(n, gast.Call) for n in gast.walk(g.iter)):
            # computed only where the filters before it hold (a call may raise or write)
            g.iter = templates.replace_as_expression("acc.inner(lambda: it)", acc=acc,
                                                     it=g.iter)
    cond = conds[-1] if conds[-1] is not None else templates.const(True)
    names = sorted({n.id for g in gens for n in gast.walk(g.target)
                    if isinstance(n, gast.Name)})
    value = templates.replace_as_expression("lambda: elt", elt=node.elt)
    value.args.args = [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                       for n in names]
    value.args.defaults = [gast.Name(id=n, ctx=gast.Load(), annotation=None,
                                     type_comment=None) for n in names]
    items = gast.ListComp(elt=templates.replace_as_expression(
        "acc.item(cond, value)", acc=acc, cond=cond, value=value), generators=gens)
    build = templates.replace_as_expression("lambda acc: items", acc=acc, items=items)
    build.args.args[0].ctx = gast.Param()
    fn = "comp_iter" if isinstance(node, gast.GeneratorExp) else "comp_list"
    return templates.replace_as_expression(f"{RESERVED}.{fn}(build)", build=build)


def _all_of(ifs: list):
    """One condition for a `for`'s filters `if c1 if c2` (c2 evaluated only when c1 holds),
    None without filters."""
    if len(ifs) < 2:
        return ifs[0] if ifs else None
    rest = [templates.replace_as_expression("lambda: c", c=c) for c in ifs[1:]]
    return templates.replace_as_expression(f"{RESERVED}.truth_and_(first, rest)",
                                           first=ifs[0], rest=rest)


def mark_test(node) -> None:
    """`node` is a condition (an `if`/`while`/`assert` test, a conditional expression's test,
    a comprehension filter): only its truth matters, so `and`/`or` in it (and under `not`)
    combine truth values, as Paddle does (a float tensor `and` a bool tensor is a bool)."""
    if isinstance(node, gast.BoolOp):
        node.d2s_test = True
        for v in node.values:
            mark_test(v)
    elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        mark_test(node.operand)


def _pending(cases) -> list:
    """`name = _d2s.Pending('name')` for each name every case binds, when the last case
    always matches (`case _:` or a capture, no guard): after the `match` it is bound on every
    path, so the guard's `if` may leave it unbound on the paths that go on."""
    last = cases[-1]
    if last.guard is not None or not (isinstance(last.pattern, gast.MatchAs)
                                      and last.pattern.pattern is None):
        return []
    names = sorted({n.id for s in cases[0].body for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)})
    keep = [n for n in names if all(any(_binds(s, n) for s in c.body) for c in cases)]
    return [stmt for name in keep for stmt in templates.replace(
        f"name = {RESERVED}.Pending(label)", name=name, label=templates.const(name))]


def match_guards(node, namer):
    """A `match` with guards as statements (see the module), or None without guards."""
    if not any(c.guard is not None for c in node.cases):
        return None
    subject, done = namer.new("subject"), namer.new("matched")
    out = templates.replace("s = subject\nd = False", s=subject, subject=node.subject, d=done)
    out += _pending(node.cases)
    first = len(out)
    for case in node.cases:
        body = case.body + templates.replace("d = True", d=done)
        if case.guard is not None:
            body = templates.replace("if guard:\n    body", guard=case.guard, body=body)
        one = gast.Match(subject=templates.name(subject),
                         cases=[gast.match_case(pattern=case.pattern, guard=None, body=body)])
        if len(out) == first:  # the first case
            out.append(one)
        else:
            out += templates.replace("if not d:\n    one", d=done, one=[one])
    return out
