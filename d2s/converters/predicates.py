"""Tensor predicates in positions Python evaluates inside an expression or a `match`:
rewritten into statements the `if` converter can turn into `cond` ops. Used by `logical`.

A walrus in a later operand of `and`/`or` in an `if` test (it binds only when that operand
is evaluated):

    if a or (m := f(x)) > 1:            _bool_1 = _d2s.truth(a)
        ...                      ->     if not _bool_1:
                                            _bool_1 = _d2s.truth((m := f(x)) > 1)
                                        if _bool_1:
                                            ...

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

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED


def _has_walrus(node) -> bool:
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(node))


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


def _pending(cases) -> list:
    """`name = _d2s.Pending('name')` for each name every case binds, when the last case
    always matches (`case _:` or a capture, no guard): after the `match` it is bound on every
    path, so the guard's `if` may leave it unbound on the paths that go on."""
    from .break_continue import _binds
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
