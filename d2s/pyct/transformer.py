"""The base class of every converter: a gast transformer that keeps origin info.

Nodes a converter creates get the origin of the user node they replace, so every generated
line maps back to a user line. `Context` carries what all converters of one function share.
"""
from __future__ import annotations

from typing import Any

import gast

from . import activity, anno, origin
from .naming import Namer
from .walk import BLOCK_FIELDS, NODE_FIELDS


class Context:
    """Shared state while converting one function.

    `namespace` resolves names at conversion time (the function's globals, closure values and
    builtins) so converters can tell a call to `rt.matmul` from a call to a user function.
    """

    def __init__(self, namer: Namer, namespace: dict[str, Any], *, owner: str | None = None,
                 cells: frozenset = frozenset()):
        self.namer = namer
        self.namespace = namespace
        self.owner = owner  # name of the first parameter of a method ('self'), if any
        self.cells = cells  # local names that closures of the user's code read


class Base(gast.NodeTransformer):
    """`visit` returns a node or a list of nodes; new nodes inherit the visited node's origin.

    A converter with no `visit_` method for an expression type never descends into
    expressions (an expression cannot contain a statement), which skips most of the tree.
    """

    # ast.NodeVisitor's own visit_Constant only forwards to the deprecated visit_Num & co.
    visit_Constant = None

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.skip_expressions = _statement_only(type(self))  # (sets `_skip` and `_fields`)
        # node class -> this class's visit_ function or None (shared by every instance: a
        # bound method kept per instance would make each converter a reference cycle)
        self._visitors = _visitors_of(type(self))
        self.scopes: list = []  # the functions and lambdas being visited (`visit_in_scope`)

    @property
    def skip_expressions(self) -> bool:
        """Whether the walk skips expressions (a converter with no `visit_` method for one;
        `ifelse` sets it where the function has no conditional expression)."""
        return self._skip is gast.expr

    @skip_expressions.setter
    def skip_expressions(self, skip: bool) -> None:
        # what `generic_visit` does not descend into, and the fields it looks into, per class
        cls = type(self)
        self._skip = gast.expr if skip else _leaves(cls)
        self._fields = (BLOCK_ONLY if _block_only(cls) else NODE_FIELDS) if skip else \
            NODE_FIELDS

    def visit_in_scope(self, node):
        """`generic_visit(node)` with the function or lambda `node` on top of `self.scopes`
        meanwhile, so `is_local` / `is_local_here` answer for the code inside it."""
        self.scopes.append(node)
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    def is_local_here(self, name: str) -> bool:
        """Whether `name` is a local name of the innermost enclosing function (`LOCALS`)."""
        return bool(self.scopes) and name in activity.locals_of(self.scopes[-1])

    def is_local(self, name: str) -> bool:
        """Whether `name` is a local name of any enclosing function or lambda: a closure
        variable of the converted code, not a global or a built-in."""
        return any(name in activity.locals_of(f) for f in self.scopes)

    def visit(self, node):
        store = getattr(node, anno.KEY, None)
        if store is not None and store.get(anno.OPAQUE, False):
            return node
        cls = node.__class__
        try:
            visitor = self._visitors[cls]
        except KeyError:
            visitor = self._visitors[cls] = getattr(type(self), "visit_" + cls.__name__, None)
        result = self.generic_visit(node) if visitor is None else visitor(self, node)
        # A node returned as it was keeps its own origin (inherit would stop at it at once).
        if result is node or result is None:
            return result
        src = anno.origin_of(node)
        if src is not None:
            for new in result if result.__class__ is list else (result,):
                if new is not node:
                    origin.inherit(new, src)
        return result

    def generic_visit(self, node):
        """As `ast.NodeTransformer.generic_visit` (lists spliced, None removed), without its
        per-field overhead: every pass visits every node."""
        ast_type = gast.AST
        skip = self._skip
        # (fields holding no node are not fetched; a converter that visits statements only
        # fetches only the statement lists)
        for field in self._fields[node.__class__]:
            old = getattr(node, field, None)
            if old.__class__ is list:
                new = []
                for item in old:
                    if isinstance(item, ast_type) and not isinstance(item, skip):
                        item = self.visit(item)
                        if item is None:
                            continue
                        if item.__class__ is list:
                            new.extend(item)
                            continue
                    new.append(item)
                old[:] = new
            elif isinstance(old, ast_type) and not isinstance(old, skip):
                new_node = self.visit(old)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node

    def visit_arguments(self, node):
        # Parameters are Name nodes (skipped as leaves) whose annotations are expressions.
        if not self.skip_expressions:
            for p in node.posonlyargs + node.args + node.kwonlyargs + [node.vararg, node.kwarg]:
                if p is not None and p.annotation is not None:
                    p.annotation = self.visit(p.annotation)
        return self.generic_visit(node)

    def visit_block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            new = self.visit(s)
            if new is None:
                continue
            out.extend(new if isinstance(new, list) else [new])
        return out


_VISITORS: dict = {}


def _visitors_of(cls) -> dict:
    table = _VISITORS.get(cls)
    if table is None:
        table = _VISITORS[cls] = {}
    return table


_STATEMENT_ONLY: dict = {}


def _statement_only(cls) -> bool:
    """Whether converter class `cls` has no `visit_` method for an expression node type."""
    found = _STATEMENT_ONLY.get(cls)
    if found is None:
        found = _STATEMENT_ONLY[cls] = not any(
            isinstance(getattr(gast, name[6:], None), type)
            and issubclass(getattr(gast, name[6:]), gast.expr)
            for name in dir(cls) if name.startswith("visit_") and getattr(cls, name) is not None)
    return found


class _BlockFields(dict):
    """Node class -> its fields that hold statements or clauses (`body`, `orelse`,
    `finalbody`, `handlers`, `cases`): all a walk that skips expressions can reach a
    statement through (everything else a statement holds is an expression, or a node made of
    expressions: `withitem`, `alias`, `arguments`, an operator)."""

    def __missing__(self, cls) -> tuple:
        found = self[cls] = tuple(f for f in cls._fields if f in BLOCK_FIELDS)
        return found


BLOCK_ONLY = _BlockFields()
_BLOCK_ONLY_OF: dict = {}
_CLAUSES = (gast.stmt, gast.excepthandler, gast.match_case, gast.expr)


def _block_only(cls) -> bool:
    """Whether converter `cls`, skipping expressions, has `visit_` methods only for
    statements, clauses and expressions (never reached then), and `Base.visit_arguments`
    (which then changes nothing): then the statement lists are the only fields its walk
    needs."""
    found = _BLOCK_ONLY_OF.get(cls)
    if found is None:
        found = _BLOCK_ONLY_OF[cls] = all(
            name == "visit_arguments" or (isinstance(getattr(gast, name[6:], None), type)
                                         and issubclass(getattr(gast, name[6:]), _CLAUSES))
            for name in dir(cls) if name.startswith("visit_") and name not in _HELPERS
            and getattr(cls, name) is not None)
    return found


_HELPERS = ("visit_in_scope", "visit_block")


_LEAVES = (gast.expr_context, gast.operator, gast.boolop, gast.unaryop, gast.cmpop, gast.Name,
           gast.Constant)
_LEAVES_OF: dict = {}


def _leaves(cls) -> tuple:
    """Leaf node types (names, constants, contexts, operators) `cls` has no `visit_` method
    for: visiting one would change nothing, and they are most of the nodes of a function."""
    found = _LEAVES_OF.get(cls)
    if found is None:
        found = _LEAVES_OF[cls] = tuple(
            t for t in _LEAVES if getattr(cls, "visit_" + t.__name__, None) is None and not any(
                getattr(cls, "visit_" + sub.__name__, None) for sub in t.__subclasses__()))
    return found


def transform(converter_cls, node, ctx: Context):
    """Run one converter over a function node (the convention each converter module follows)."""
    return converter_cls(ctx).visit(node)
