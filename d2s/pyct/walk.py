"""Walking gast trees fast: the fields worth visiting per node class, `walk`, and the
statement lists inside compound statements (what every analysis here iterates over).

>>> import gast
>>> tree = gast.parse("if a:\\n  b = 1")
>>> sorted(type(n).__name__ for n in walk(tree.body[0].test))
['Load', 'Name']
"""
from __future__ import annotations

import gast

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


class _FieldTable(dict):
    """Node class -> the fields a walk must look into, found on first use of each class.

    Skipped are the fields that by Python's grammar hold no node (names, strings, numbers,
    constants: `_SCALAR_FIELDS`), and, for walks that only look for names (`leaves=False`),
    contexts and operators, nodes with no fields. Walks run over every node of a function
    many times per conversion, and a field not fetched is the cheapest."""

    def __init__(self, leaves: bool):
        super().__init__()
        self.leaves = leaves

    def __missing__(self, cls) -> tuple:
        skip = _SCALAR_FIELDS.get(cls.__name__, ())
        if not self.leaves:
            skip += _LEAF_FIELDS
        found = self[cls] = tuple(f for f in cls._fields if f not in skip)
        return found


_SCALAR_FIELDS = {
    "FunctionDef": ("name", "type_comment"), "AsyncFunctionDef": ("name", "type_comment"),
    "ClassDef": ("name",), "Assign": ("type_comment",), "For": ("type_comment",),
    "AsyncFor": ("type_comment",), "With": ("type_comment",), "AsyncWith": ("type_comment",),
    "AnnAssign": ("simple",), "ImportFrom": ("module", "level"), "Global": ("names",),
    "Nonlocal": ("names",), "Constant": ("value", "kind"), "Attribute": ("attr",),
    "Name": ("id", "type_comment"), "FormattedValue": ("conversion",),
    "comprehension": ("is_async",), "keyword": ("arg",), "alias": ("name", "asname"),
    "MatchSingleton": ("value",), "MatchMapping": ("rest",), "MatchClass": ("kwd_attrs",),
    "MatchStar": ("name",), "MatchAs": ("name",), "TypeVar": ("name",),
    "ParamSpec": ("name",), "TypeVarTuple": ("name",), "TypeIgnore": ("lineno", "tag"),
}  # (gast's ExceptHandler.name is a Name node, so it is walked)
_LEAF_FIELDS = ("ctx", "op", "ops")
NODE_FIELDS = _FieldTable(leaves=True)  # for walks that must reach every node
NAME_FIELDS = _FieldTable(leaves=False)  # for walks that look for names and binding forms


def push_children(node, fields, push, ast_type=gast.AST) -> None:
    """`push` every node held in `node`'s `fields` (an entry of `NODE_FIELDS` or
    `NAME_FIELDS`): the one step of each iterative walk here."""
    for field in fields:
        v = getattr(node, field, None)
        if v.__class__ is list:
            for x in v:
                if isinstance(x, ast_type):
                    push(x)
        elif isinstance(v, ast_type):
            push(v)


def walk(node):
    """Every node under `node` (itself included), in no particular order; faster than
    `ast.walk`, which matters because analysis walks the function many times."""
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        yield n
        push_children(n, NODE_FIELDS[n.__class__], push)


SCOPE_SET = frozenset(SCOPES)
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def nested_defs(fn) -> list:
    """Every FunctionDef below `fn`, at any depth (a def is a statement: only statement lists
    can hold one)."""
    out = []
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if n.__class__ is gast.FunctionDef:
            out.append(n)
        for field in BLOCK_FIELDS:
            block = getattr(n, field, None)
            if block:
                stack.extend(block)
    return out


STATEMENTS = frozenset(c for c in vars(gast).values()
                        if isinstance(c, type) and issubclass(c, gast.stmt))
TRY_STAR = getattr(gast, "TryStar", gast.Try)


def blocks(stmt) -> list:
    """The statement lists directly inside a compound statement."""
    get = BLOCKS.get(stmt.__class__)
    return [] if get is None else get(stmt)


def _try_blocks(stmt) -> list:
    return [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]


BLOCKS = {  # the statements that hold statement lists liveness and definedness go into
    gast.If: lambda s: [s.body, s.orelse], gast.While: lambda s: [s.body, s.orelse],
    gast.For: lambda s: [s.body, s.orelse], gast.AsyncFor: lambda s: [s.body, s.orelse],
    gast.With: lambda s: [s.body], gast.AsyncWith: lambda s: [s.body],
    gast.Try: _try_blocks, TRY_STAR: _try_blocks,
    gast.Match: lambda s: [c.body for c in s.cases],
}
LOOPS = frozenset({gast.While, gast.For, gast.AsyncFor})
# Statements whose reads `Facts.read` gathers from their parts (the others: one walk).
COMPOUND = frozenset(BLOCKS) | {gast.FunctionDef, gast.ClassDef}
