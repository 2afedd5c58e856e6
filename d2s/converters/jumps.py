"""Shared by the break/continue and return converters: replacing a jump by a flag.

`rewrite(stmts, kinds, flag, ...)` replaces each jump statement of the given kinds by
`flag = True` (plus `retval = value` for a return), drops what follows it in its block (it
was unreachable), and guards the statements after any compound statement containing such a
jump with `if not flag:`. Nested loops own their own `break`/`continue`; functions own their
`return`. `count_returns(stmts)`: how many returns a function body holds (the return
converter's and the try converter's question).
"""
from __future__ import annotations

import functools

import gast

from ..pyct import anno, templates
from ..pyct.naming import RESERVED
from ..pyct.origin import inherit as origin_inherit

_LOOPS = (gast.For, gast.While, gast.AsyncFor)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def contains(stmts, kinds, *, into_loops: bool) -> bool:
    """Whether `stmts` contain a jump of `kinds` that belongs to the enclosing construct."""
    stack = list(stmts) if isinstance(stmts, list) else [stmts]
    while stack:
        n = stack.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, _LOOPS) and not into_loops:
            stack.extend(n.orelse)  # a loop's else clause jumps for the enclosing loop
            continue
        stack.extend(c for c in gast.iter_child_nodes(n) if isinstance(c, gast.AST))
    return False


def count_returns(stmts: list) -> int:
    """How many returns `stmts` hold outside nested functions and classes. A return is a
    statement, so only statement lists need a look (an expression holds none)."""
    count = 0
    stack = list(stmts)
    while stack:
        n = stack.pop()
        cls = n.__class__
        if cls is gast.Return:
            count += 1
        elif cls not in _SCOPE_CLASSES:
            for field in _BLOCK_FIELDS:
                block = getattr(n, field, None)
                if block.__class__ is list:
                    stack.extend(block)
    return count


_SCOPE_CLASSES = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef})
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def rewrite(stmts: list, kinds, flag: str, *, into_loops: bool, on_jump, fresh=None) -> list:
    """See the module doc; `on_jump(stmt)` gives the statements replacing one jump; `fresh()`
    names the flag of a `finally` clause's own jumps (`_finally_flag`)."""
    out = []
    again = functools.partial(rewrite, kinds=kinds, into_loops=into_loops, fresh=fresh)
    for i, s in enumerate(stmts):
        if isinstance(s, kinds):
            return out + _stamped(on_jump(s), s)
        if not contains(s, kinds, into_loops=into_loops):
            out.append(s)
            continue
        jump = first_jump(s, kinds, into_loops=into_loops)  # (before its jumps are replaced)
        own = _finally_flag(s, kinds, into_loops, fresh)
        for field in _blocks(s, into_loops):
            if own is not None and field == "finalbody":
                s.finalbody = templates.replace("own = False", own=own) + again(
                    s.finalbody, flag=own, on_jump=lambda j, own=own: on_jump(j) + set_flag(own))
            else:
                setattr(s, field, again(getattr(s, field), flag=flag, on_jump=on_jump))
        for h in s.handlers if isinstance(s, gast.Try) else s.cases if isinstance(
                s, gast.Match) else ():
            h.body = again(h.body, flag=flag, on_jump=on_jump)
        out.append(s)
        rest = stmts[i + 1:]
        if rest:
            guard = templates.replace("if not flag:\n    rest", flag=flag,
                                      rest=again(rest, flag=flag, on_jump=on_jump))
            out += _stamped(guard, jump)
        return out
    return out


def _finally_flag(s, kinds, into_loops: bool, fresh):
    """A new flag for the jumps of the `finally` clause of `s` (None: it has none): what
    follows such a jump in the clause is guarded by it, not by the shared flag, which a jump
    of the `try` body may have set already (the clause still runs all of its code then)."""
    if fresh is None or not isinstance(s, gast.Try) or not s.finalbody:
        return None
    return fresh() if contains(s.finalbody, kinds, into_loops=into_loops) else None


def first_jump(s, kinds, *, into_loops: bool):
    """The first jump of `kinds` in `s` that belongs to the enclosing construct, or None."""
    stack = [s]
    while stack:
        n = stack.pop()
        if isinstance(n, kinds):
            return n
        if isinstance(n, _SCOPES) or (isinstance(n, _LOOPS) and not into_loops):
            if isinstance(n, _LOOPS):
                stack.extend(reversed(n.orelse))
            continue
        stack.extend(reversed([c for c in gast.iter_child_nodes(n) if isinstance(c, gast.AST)]))
    return None


def _stamped(new: list, jump) -> list:
    """`new` (statements made for `jump`) with the jump's origin: a message or traceback about
    the generated `if not flag:` or assignment names the user's `return`/`break`/`continue`,
    not the enclosing `def` or loop."""
    src = anno.getanno(jump, anno.ORIGIN, None) if jump is not None else None
    if src is not None:
        for n in new:
            origin_inherit(n, src)
    return new


def _blocks(s, into_loops: bool) -> list[str]:
    if isinstance(s, _LOOPS):
        return ["body", "orelse"] if into_loops else ["orelse"]
    return [f for f in ("body", "orelse", "finalbody") if isinstance(getattr(s, f, None), list)]


def set_flag(flag: str) -> list:
    return templates.replace("flag = True", flag=flag)


def stop_loop(loop, flag: str) -> None:
    """Make `loop` stop once `flag` is set: `while not flag and test` / an extra test.

    A `for` loop's extra test lives in an annotation, which later passes do not visit, so it
    is written with the logical operators directly. The body also opens with `if flag:
    break`, so the code is right on its own (before the loop converter, which implements the
    extra test and drops this guard)."""
    if isinstance(loop, gast.While):
        loop.test = templates.replace_as_expression("not flag and test", flag=flag,
                                                    test=loop.test)
        return
    extra = anno.getanno(loop, anno.EXTRA_TEST, None)
    test = templates.replace_as_expression(f"{RESERVED}.not_(flag)", flag=flag)
    if extra is not None:
        test = templates.replace_as_expression(f"{RESERVED}.and_(extra, lambda: test)",
                                               extra=extra, test=test)
    anno.setanno(loop, anno.EXTRA_TEST, test)
    guard = templates.replace("if flag:\n    break", flag=flag)[0]
    anno.setanno(guard, anno.LOOP_GUARD, True)
    loop.body = [guard] + loop.body
