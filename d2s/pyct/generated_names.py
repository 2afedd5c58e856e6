"""Names of generated functions reused within a scope that holds many of them, so that
CPython compiles a huge converted function in linear time.

Every `if` and loop becomes local functions (`_if_true_3`, `_for_body_7`) defined right before
the one statement that calls the operator with them. Each name the Namer gives is new, so the
10,000-line function of `benchmarks/huge_function.py` has 1,794 local names, and CPython's
symbol table copies the set of names bound in the enclosing function into each of its 2,856
nested functions: compiling grows as functions x locals (0.5 s of its 0.8 s). A generated
function is dead once the statement after it has run, so the next group of definitions can
take the same names:

    def _if_true_1(y): ...                    def _if_true_1(y): ...
    def _if_false_1(y): ...                   def _if_false_1(y): ...
    y = _d2s.ifelse(c, _if_true_1, ...)  ->   y = _d2s.ifelse(c, _if_true_1, ...)
    def _if_true_2(y): ...                    def _if_true_1(y): ...
    def _if_false_2(y): ...                   def _if_false_1(y): ...
    y = _d2s.ifelse(d, _if_true_2, ...)       y = _d2s.ifelse(d, _if_true_1, ...)

A group is a run of generated defs and the statement after it. Its names are renamed only if
nothing outside the group reads them, and only in scopes with at least `REUSE_FROM` generated
defs, where renaming costs less than it saves: a function of ordinary size keeps its distinct
names (easier to read in `.code`).
"""
from __future__ import annotations

import re

import gast

from . import anno
from .walk import BLOCK_FIELDS, NAME_FIELDS

# Generated defs in one scope (its statement lists, not nested scopes) from which renaming
# pays: it walks the whole function (about 0.1 ms per def of the benchmark's code), and what
# it saves grows as defs x locals (0.03 s at 627 defs, 0.54 s at 2,499): even at ~1,200.
REUSE_FROM = 1200
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
    kept, found = _names_outside_groups(fn, owner)  # kept: the names that stay
    renamed = owner.keys() - kept
    if not renamed:
        return
    mapping: dict[str, str] = {}
    _choose(scope, renamed, kept, frozenset(), mapping)
    for old, new in mapping.items():
        for node in found[old]:
            if node.__class__ is gast.Name:
                node.id = new
            else:
                node.name = new


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


def _names_outside_groups(fn, owner: dict) -> tuple[set, dict]:
    """(Every name in `fn`, read, bound, declared or imported, except the names of generated
    defs of `owner` used inside their def's group only; name of `owner` -> the Name and
    FunctionDef nodes of it inside its group)."""
    out, found = set(), {name: [] for name in owner}
    starts = {id(n): g for g in set(owner.values()) for n in [g.user] + g.defs}
    # Groups begin at statements: the walk carries which groups it is inside per statement,
    # and walks each statement's expressions (most of the nodes) with a plain stack.
    statements = [(fn, None)]  # (statement, the groups it is in: (innermost, (next, ...)))
    stmt_type, ast_type, name_type = gast.stmt, gast.AST, gast.Name
    while statements:
        stmt, inside = statements.pop()
        group = starts.get(id(stmt))
        if group is not None:
            inside = (group, inside)
        stack = [stmt]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            cls = node.__class__
            name = None
            if cls is name_type:
                name = node.id
            elif cls in _SCOPES:
                name = getattr(node, "name", None)
            elif cls is gast.Global or cls is gast.Nonlocal:
                out.update(node.names)  # (declared names are never renamed)
            elif cls is gast.alias:
                out.add((node.asname or node.name).split(".")[0])
            if name is not None:
                mine = owner.get(name)
                if mine is None or not _inside(mine, inside):
                    out.add(name)
                else:
                    found[name].append(node)
            for field in NAME_FIELDS[cls]:
                value = getattr(node, field, None)
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, stmt_type):
                            statements.append((item, inside))
                        elif isinstance(item, ast_type):
                            push(item)
                elif isinstance(value, ast_type):  # (a statement is always in a list)
                    push(value)
    return out, found


def _inside(group, inside) -> bool:
    while inside is not None:
        if inside[0] is group:
            return True
        inside = inside[1]
    return False


def _choose(scope: _Scope, renamed: set, kept: set, taken: frozenset, mapping: dict,
            firsts: dict | None = None) -> None:
    """New names for the groups of `scope`, then of the functions nested in it. A group takes
    the smallest numbers that are neither `kept` nor `taken` (the names of the groups around
    this scope, which its code may read); the names of one base keep their order."""
    firsts = {} if firsts is None else firsts
    names_of = {}
    for group in scope.groups:
        olds = sorted((d.name for d in group.defs if d.name in renamed), key=_base_number)
        used = set()
        after: dict = {}  # base -> the number its last name in this group took, plus one
        for old in olds:  # (a base's names take increasing numbers: search on from there)
            base = _base_number(old)[0]
            k = max(_first_not_kept(base, kept, firsts), after.get(base, 1))
            while f"{base}_{k}" in kept or f"{base}_{k}" in taken or f"{base}_{k}" in used:
                k += 1
            mapping[old] = f"{base}_{k}"
            used.add(mapping[old])
            after[base] = k + 1
        names_of[id(group)] = frozenset(mapping.get(d.name, d.name) for d in group.defs)
    for group, child in scope.children:
        inner = taken if group is None else taken | names_of[id(group)]
        _choose(child, renamed, kept, inner, mapping, firsts)


def _first_not_kept(base: str, kept: set, firsts: dict) -> int:
    """The smallest k >= 1 whose `{base}_{k}` is not `kept` (remembered in `firsts`: an `elif`
    chain keeps the names of all its defs, which every group would count past again)."""
    k = firsts.get(base, 1)
    while f"{base}_{k}" in kept:
        k += 1
    firsts[base] = k
    return k


def _base_number(name: str) -> tuple[str, int]:
    base, number = _NUMBERED.fullmatch(name).groups()
    return base, int(number)


_SCOPES = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef})
