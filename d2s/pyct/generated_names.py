"""Names of generated functions reused within a scope that holds many of them, so that
CPython compiles a huge converted function in linear time.

Every `if` and loop becomes local functions (`_if_true_3`, `_for_body_7`) defined right before
the one statement that calls the operator with them. Each name the Namer gives is new, so a
function of 3,000 `if`s gets 6,000 local names, and CPython's symbol table copies the set of
names bound in the enclosing function into every nested function: compiling it grows as
functions x locals (0.5 s of 0.8 s for 10,000 lines). A generated function is dead once the
statement after it has run, so the next group of definitions can take the same names:

    def _if_true_1(y): ...                    def _if_true_1(y): ...
    def _if_false_1(y): ...                   def _if_false_1(y): ...
    y = _d2s.ifelse(c, _if_true_1, ...)  ->   y = _d2s.ifelse(c, _if_true_1, ...)
    def _if_true_2(y): ...                    def _if_true_1(y): ...
    def _if_false_2(y): ...                   def _if_false_1(y): ...
    y = _d2s.ifelse(d, _if_true_2, ...)       y = _d2s.ifelse(d, _if_true_1, ...)

A group is a run of generated defs and the statement after it. Its names are renamed only if
nothing outside the group reads them, and only in scopes with at least `REUSE_FROM` generated
defs: a function of ordinary size keeps its distinct names (easier to read in `.code`), which
cost nothing to compile.
"""
from __future__ import annotations

import re

import gast

from . import anno
from .walk import BLOCK_FIELDS, NAME_FIELDS, push_children

REUSE_FROM = 64  # generated defs in one scope (in its statement lists, not nested scopes)
_NUMBERED = re.compile(r"(_.+)_(\d+)")


class _Group:
    """A run of generated defs and the statement after it (which uses them), in one
    statement list."""

    __slots__ = ("defs", "user")

    def __init__(self, defs: list, user):
        self.defs = defs
        self.user = user


class _Scope:
    """The groups of one function's body (none if it holds fewer than `REUSE_FROM` generated
    defs) and the functions nested in it, each with the group it belongs to (or None)."""

    def __init__(self, body: list, reuse_from: int):
        self.groups: list[_Group] = []
        self.children: list[tuple[_Group | None, _Scope]] = []
        nested = []
        for block in _statement_lists(body):
            self.groups += _groups_of(block)
            nested += [s for s in block if s.__class__ is gast.FunctionDef
                       or s.__class__ is gast.AsyncFunctionDef]
        if sum(len(g.defs) for g in self.groups) < reuse_from:
            self.groups = []
        group_of = {id(d): g for g in self.groups for d in g.defs}
        self.children = [(group_of.get(id(d)), _Scope(d.body, reuse_from)) for d in nested]

    def all_groups(self):
        yield from self.groups
        for _, child in self.children:
            yield from child.all_groups()


def reuse_generated_names(fn: gast.FunctionDef, reuse_from: int | None = None) -> None:
    """Rename, in place, the generated functions of each scope in `fn` that holds at least
    `reuse_from` (default `REUSE_FROM`) of them, reusing the names of the groups before (see
    the module doc)."""
    scope = _Scope(fn.body, REUSE_FROM if reuse_from is None else reuse_from)
    owner = {d.name: g for g in scope.all_groups() for d in g.defs
             if _NUMBERED.fullmatch(d.name)}
    if not owner:
        return
    kept, outermost = _names_outside_groups(fn, owner)  # kept: the names that stay
    renamed = owner.keys() - kept
    if not renamed:
        return
    mapping: dict[str, str] = {}
    _choose(scope, renamed, kept, frozenset(), mapping)
    for group in outermost:  # (a renamed name is used inside its group only)
        for node in group.defs + [group.user]:
            _rename(node, mapping)


def _statement_lists(stmts: list):
    """`stmts` and the statement lists nested in them within the same scope."""
    stack = [stmts]
    while stack:
        block = stack.pop()
        yield block
        for s in block:
            if s.__class__ in _SCOPES:
                continue
            for field in BLOCK_FIELDS:
                inner = getattr(s, field, None)
                if inner:
                    if inner[0].__class__ in (gast.ExceptHandler, gast.match_case):
                        stack.extend(part.body for part in inner)
                    else:
                        stack.append(inner)


def _groups_of(block: list) -> list:
    out, run = [], []
    for s in block:
        if s.__class__ is gast.FunctionDef and anno.getanno(s, anno.GENERATED, False):
            run.append(s)
        elif run:
            out.append(_Group(run, s))
            run = []
    return out


def _names_outside_groups(fn, owner: dict) -> tuple[set, list]:
    """(Every name in `fn`, read, bound, declared or imported, except the names of generated
    defs of `owner` used inside their def's group only; the groups not inside another)."""
    out, outermost = set(), []
    starts = {id(n): g for g in set(owner.values()) for n in [g.user] + g.defs}
    # Groups begin at statements: the walk carries which groups it is inside per statement,
    # and walks each statement's expressions (most of the nodes) with a plain stack.
    statements = [(fn, None)]  # (statement, the groups it is in: (innermost, (next, ...)))
    stmt_type, ast_type = gast.stmt, gast.AST
    while statements:
        stmt, inside = statements.pop()
        group = starts.get(id(stmt))
        if group is not None:
            if inside is None and group.user is stmt:
                outermost.append(group)
            inside = (group, inside)
        names = []
        stack = [stmt]
        while stack:
            node = stack.pop()
            cls = node.__class__
            if cls is gast.Name:
                names.append(node.id)
            elif cls in _SCOPES:
                names.append(getattr(node, "name", None))
            elif cls is gast.Global or cls is gast.Nonlocal:
                out.update(node.names)  # (declared names are never renamed)
            elif cls is gast.alias:
                out.add((node.asname or node.name).split(".")[0])
            for field in NAME_FIELDS[cls]:
                value = getattr(node, field, None)
                if value.__class__ is not list:
                    value = (value,)
                for item in value:
                    if isinstance(item, stmt_type) and item is not stmt:
                        statements.append((item, inside))
                    elif isinstance(item, ast_type):
                        stack.append(item)
        for name in names:
            if not _inside(owner.get(name), inside):
                out.add(name)
    out.discard(None)  # (a lambda's)
    return out, outermost


def _inside(group, inside) -> bool:
    while inside is not None and group is not None:
        if inside[0] is group:
            return True
        inside = inside[1]
    return False


def _choose(scope: _Scope, renamed: set, kept: set, taken: frozenset, mapping: dict) -> None:
    """New names for the groups of `scope`, then of the functions nested in it. A group takes
    the smallest numbers that are neither `kept` nor `taken` (the names of the groups around
    this scope, which its code may read); the names of one base keep their order."""
    names_of = {}
    for group in scope.groups:
        olds = sorted((d.name for d in group.defs if d.name in renamed), key=_base_number)
        used = set()
        for old in olds:
            base = _base_number(old)[0]
            k = 1
            while f"{base}_{k}" in kept or f"{base}_{k}" in taken or f"{base}_{k}" in used:
                k += 1
            mapping[old] = f"{base}_{k}"
            used.add(mapping[old])
        names_of[id(group)] = frozenset(mapping.get(d.name, d.name) for d in group.defs)
    for group, child in scope.children:
        inner = taken if group is None else taken | names_of[id(group)]
        _choose(child, renamed, kept, inner, mapping)


def _base_number(name: str) -> tuple[str, int]:
    base, number = _NUMBERED.fullmatch(name).groups()
    return base, int(number)


def _rename(fn, mapping: dict) -> None:
    stack = [fn]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        cls = node.__class__
        if cls is gast.Name:
            new = mapping.get(node.id)
            if new is not None:
                node.id = new
        elif cls is gast.FunctionDef:  # (`fn` itself is in no group: never renamed)
            new = mapping.get(node.name)
            if new is not None:
                node.name = new
        push_children(node, NAME_FIELDS[cls], push)


_SCOPES = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef})
