"""A `return` inside a `try` whose `finally` changes a list or dict the return returns: in
Python the returned value is the object itself, so the `finally`'s `log.append(x)` shows in
it. Converted code keeps the returned value in `_retval`, and a list a tensor condition grows
is a new graph value after each change, so after each statement of the `finally` that
changes such a list (by a method call or an item assignment) the returned value takes it again:

    try:                                  try:
        return h, log                         _do_return = True
    finally:                      ->          _retval = (h, log)
        log.append(x)                     finally:
                                              log.append(x)
                                              if _do_return:
                                                  _retval = (_retval[0], log)

(before the return pass rewrites the returns; a `return` later in the `finally` still
overrides). A name the `finally` also rebinds, or a `try` whose `return`s return different
things (`return h, log` and `return None`), is refused at the change: which object the caller
gets could not be rebuilt.
"""
from __future__ import annotations

import copy

import gast

from ..errors import ConversionError
from ..pyct import anno, templates

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                      "update", "setdefault", "popitem", "add", "discard"})


def refresh_returns(body: list, flag: str, retval: str) -> None:
    """Add the re-reads the module doc describes to every `try` of `body` that needs them."""
    for t in _walk(body):
        if isinstance(t, gast.Try) and t.finalbody:
            _refresh(t, flag, retval)


def _refresh(t, flag: str, retval: str) -> None:
    changed = _changed(t.finalbody)
    if not changed:
        return
    protected = t.body + [s for h in t.handlers for s in h.body] + t.orelse
    returns = [n for n in _walk(protected) if isinstance(n, gast.Return)]
    wanted = {n for r in returns for n in _display_names(r.value)} & set(changed)
    if not wanted:
        return
    rebound = {n.id for n in _walk(t.finalbody) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)}
    values = [_rebuilt(r.value, wanted, lambda: gast.Name(retval, gast.Load(), None, None))
              for r in returns]
    several = len({gast.dump(v) for v in values}) > 1
    for name in sorted(wanted):
        if several or name in rebound:
            why = ("the `try`'s `return`s return different things" if several else
                   f"the `finally` also rebinds '{name}'")
            raise ConversionError(
                f"the `finally` clause changes '{name}', which a `return` of its `try` "
                f"returns, and {why}: converted code cannot tell which object the caller "
                f"gets. Change '{name}' before the `return`, or return a copy "
                f"(`list({name})`).", origin=anno.getanno(changed[name], anno.ORIGIN, None))
    t.finalbody = _after_changes(t.finalbody, wanted, flag, retval, values[0])


def _after_changes(stmts: list, wanted: set, flag: str, retval: str, value) -> list:
    out = []
    for s in stmts:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and not isinstance(s, _SCOPES):
                setattr(s, field, _after_changes(inner, wanted, flag, retval, value))
        for h in getattr(s, "handlers", ()):
            h.body = _after_changes(h.body, wanted, flag, retval, value)
        out.append(s)
        if _change_of(s) in wanted:
            out += templates.replace("if flag:\n    retval = value", flag=flag, retval=retval,
                                     value=copy.deepcopy(value))
    return out


def _rebuilt(value, wanted: set, current):
    """The return value `value` with its parts that are names in `wanted` read again and the
    others taken from `current()` (a new node for the value kept when the return ran)."""
    if isinstance(value, gast.Name) and value.id in wanted:
        return gast.Name(value.id, gast.Load(), None, None)
    if isinstance(value, (gast.Tuple, gast.List)) and not any(
            isinstance(e, gast.Starred) for e in value.elts):
        elts = [_rebuilt(e, wanted, lambda i=i: gast.Subscript(
            current(), gast.Constant(i, None), gast.Load())) for i, e in enumerate(value.elts)]
        return type(value)(elts, gast.Load())
    return current()


def _display_names(value) -> list:
    """Names that are the return value, or items of the tuples and lists it is written as."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, (gast.Tuple, gast.List)):
        return [n for e in value.elts for n in _display_names(e)]
    return []


def _changed(stmts: list) -> dict:
    """Name -> the first statement of `stmts` that changes the object it names in place."""
    found = {}
    for n in _walk(stmts):
        name = _change_of(n)
        if name is not None and name not in found:
            found[name] = n
    return found


def _change_of(s):
    """The name whose object the statement `s` changes in place (`log.append(x)`,
    `stats[k] = v`, `del log[0]`), or None."""
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
        f = s.value.func
        if isinstance(f, gast.Attribute) and f.attr in _CHANGES and \
                isinstance(f.value, gast.Name):
            return f.value.id
    targets = s.targets if isinstance(s, (gast.Assign, gast.Delete)) else \
        [s.target] if isinstance(s, gast.AugAssign) else []
    for t in targets:
        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
            return t.value.id
    return None


def _walk(stmts: list):
    """The nodes of `stmts`, not those inside nested functions and classes."""
    stack = list(reversed(stmts))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _SCOPES):
            stack.extend(reversed([c for c in gast.iter_child_nodes(n)
                                   if isinstance(c, gast.AST)]))
