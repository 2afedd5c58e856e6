"""Definedness: the names possibly bound before each statement (`DEFINED_IN`), and the names
every path through a statement list surely binds (`surely_bound`).

>>> import gast
>>> from d2s.pyct import anno
>>> fn = gast.parse("def f(a):\\n  if a:\\n    b = 1\\n  return b").body[0]
>>> _ = annotate(fn.body, frozenset({'a'}), Facts())
>>> sorted(anno.getanno(fn.body[1], anno.DEFINED_IN)), sorted(surely_bound(fn.body))
(['a', 'b'], [])
"""
from __future__ import annotations

import gast

from . import anno
from .activity import Facts, binding_names, written
from .walk import BLOCKS, LOOPS, TRY_STAR, blocks


def annotate(stmts: list, defined: frozenset, facts: Facts) -> frozenset:
    """Set `DEFINED_IN` on every statement of `stmts` (and of the blocks inside them) when
    `defined` are the names possibly bound before them; returns those after them."""
    key = anno.KEY
    for s in stmts:
        store = getattr(s, key, None)
        if store is None:
            setattr(s, key, {anno.DEFINED_IN: defined})
        else:
            store[anno.DEFINED_IN] = defined
        w = facts.written(s)
        cls = s.__class__
        if cls in LOOPS:
            annotate(s.body, defined | w, facts)  # later iterations see the body's bindings
            annotate(s.orelse, defined | w, facts)
        elif cls in BLOCKS:
            # A try body starts with what was bound before the try; handlers, else and
            # finally may follow any part of it.
            inner = defined | w if cls in (gast.Try, TRY_STAR) else defined
            for block in BLOCKS[cls](s):
                annotate(block, defined if block is getattr(s, "body", None) and cls in (
                    gast.Try, TRY_STAR) else inner, facts)
        if w and not w <= defined:  # (else the same set, shared: no copy per statement,
            defined = defined | w    # which in a long function would be quadratic)
    return defined


def surely_bound(stmts: list) -> set[str]:
    """Names every path through `stmts` binds (when it completes normally)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, gast.If):
            out |= surely_bound(s.body) & surely_bound(s.orelse)
        elif isinstance(s, (gast.With, gast.AsyncWith)):
            out |= surely_bound(s.body) | written(s.items)
        elif isinstance(s, gast.Try):
            handled = [surely_bound(h.body) for h in s.handlers]
            body = surely_bound(s.body + s.orelse)
            for h in handled:
                body &= h
            out |= body | surely_bound(s.finalbody)
        elif isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            out.add(s.name)
        elif isinstance(s, (gast.Import, gast.ImportFrom)):
            out |= written(s)
        elif not blocks(s):
            out |= rebound(s)
    return out


def rebound(s) -> set:
    """Names a simple statement surely rebinds in this scope (`d[k] = v` and `a.b = v` only
    mutate; `x += 1` needs `x` bound already; `del x` unbinds; a comprehension's targets are
    its own)."""
    if s.__class__ in (gast.AugAssign, gast.Delete):
        return set()
    out: set = set()
    binding_names(s, out)
    return out
