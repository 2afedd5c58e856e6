"""Liveness: the names that may be read after each statement before being rebound
(`LIVE_OUT`), and at the start of each loop iteration (`LOOP_LIVE`, the loop-carried names).

>>> import gast
>>> from d2s.pyct import anno
>>> fn = gast.parse("def f(a):\\n  b = a\\n  c = 2\\n  return b").body[0]
>>> sorted(live_in(fn.body, frozenset())), sorted(anno.getanno(fn.body[0], anno.LIVE_OUT))
(['a'], ['b'])
"""
from __future__ import annotations

import gast

from . import anno
from .activity import Facts, free_names, written
from .walk import BLOCKS, TRY_STAR


def live_in(stmts: list, live_out: frozenset) -> frozenset:
    """Names live at the start of `stmts` when `live_out` are live after them (annotating
    `LIVE_OUT` and `LOOP_LIVE` below, as `analyze` does)."""
    return annotate(stmts, live_out, Facts())


def annotate(stmts: list, live_out: frozenset, facts: Facts | None = None) -> frozenset:
    """Set `LIVE_OUT` on every statement of `stmts` (and `LOOP_LIVE` on loops) when
    `live_out` are live after them; returns the names live before them."""
    if facts is None:
        facts = Facts()
    key = anno.KEY
    live = live_out
    for s in reversed(stmts):
        store = getattr(s, key, None)
        if store is None:
            setattr(s, key, {anno.LIVE_OUT: live})
        else:
            store[anno.LIVE_OUT] = live
        rule = _RULES.get(s.__class__)
        if rule is not None:
            live = rule(s, live, facts)
        else:  # a simple statement
            loads, rebound = facts.uses(s)
            live = (live - rebound) | loads
    return live


def _live_if(s, out: frozenset, facts: Facts) -> frozenset:
    return facts.read(s.test) | annotate(s.body, out, facts) | annotate(s.orelse, out, facts)


def _live_while(s, out: frozenset, facts: Facts) -> frozenset:
    header = out | annotate(s.orelse, out, facts) | facts.read(s.test)
    for _ in range(len(facts.written_all(s.body)) + 2):  # a fixpoint; each round adds names
        new = header | annotate(s.body, header, facts)
        if new == header:
            break
        header = new
    anno.setanno(s, anno.LOOP_LIVE, header)
    return header


def _live_for(s, out: frozenset, facts: Facts) -> frozenset:
    targets = written(s.target)
    extra = anno.getanno(s, anno.EXTRA_TEST, None)  # read before each iteration
    header = out | annotate(s.orelse, out, facts) | (
        facts.read(extra) if extra is not None else set())
    for _ in range(len(facts.written_all(s.body)) + 2):
        new = header | (annotate(s.body, header, facts) - targets)
        if new == header:
            break
        header = new
    anno.setanno(s, anno.LOOP_LIVE, header)
    return header | facts.read(s.iter)


def _live_exit(s, out: frozenset, facts: Facts) -> frozenset:
    return facts.read(s)  # return / raise: nothing after it runs


def _live_def(s, out: frozenset, facts: Facts) -> frozenset:
    """A def reads its header now and, when called, the names free in it (not its own
    parameters and locals: the parameter `i` of a loop body function does not make an
    earlier `i` live)."""
    if s.__class__ is not gast.FunctionDef and s.__class__ is not gast.AsyncFunctionDef:
        return (out - {s.name}) | facts.read(s)  # a class body runs now
    a = s.args
    params = [p for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p]
    header = list(s.decorator_list) + list(a.defaults) + [
        d for d in a.kw_defaults if d is not None] + (
        [s.returns] if s.returns is not None else []) + [
        p.annotation for p in params if getattr(p, "annotation", None) is not None]
    live = (out - {s.name}) | free_names(s)
    for part in header:
        live = live | facts.read(part)
    return live


def _live_with(s, out: frozenset, facts: Facts) -> frozenset:
    """`with`: the body runs once, in order, after the items are evaluated."""
    live = annotate(s.body, out, facts)
    for item in s.items:
        live = live | facts.read(item)
    return live


def _live_parts(s, out: frozenset, facts: Facts) -> frozenset:
    """try / with / match: any part may run; no part surely rebinds a name."""
    live = frozenset(out)
    for block in BLOCKS[s.__class__](s):
        live = live | annotate(block, out, facts)
    for part in list(getattr(s, "items", [])) + ([s.subject] if hasattr(s, "subject") else []):
        live = live | facts.read(part)
    for c in getattr(s, "cases", []):
        if c.guard:
            live = live | facts.read(c.guard)
    return live


_RULES = {
    gast.If: _live_if, gast.While: _live_while, gast.For: _live_for,
    gast.AsyncFor: _live_for, gast.Return: _live_exit, gast.Raise: _live_exit,
    gast.FunctionDef: _live_def, gast.ClassDef: _live_def,
    gast.With: _live_with, gast.AsyncWith: _live_with, gast.Try: _live_parts,
    TRY_STAR: _live_parts, gast.Match: _live_parts,
}
