"""The base class of every converter: a gast transformer that keeps origin info.

Nodes a converter creates get the origin of the user node they replace, so every generated
line maps back to a user line. `Context` carries what all converters of one function share.
"""
from __future__ import annotations

from typing import Any

import gast

from . import anno, origin
from .naming import Namer


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
    """`visit` returns a node or a list of nodes; new nodes inherit the visited node's origin."""

    def __init__(self, ctx: Context):
        self.ctx = ctx

    def visit(self, node):
        if anno.getanno(node, anno.OPAQUE, False):
            return node
        result = super().visit(node)
        src = anno.getanno(node, anno.ORIGIN, None)
        if src is not None and result is not None:
            for new in result if isinstance(result, list) else [result]:
                origin.inherit(new, src)
        return result

    def generic_visit(self, node):
        """As `ast.NodeTransformer.generic_visit` (lists spliced, None removed), without its
        per-field overhead: every pass visits every node."""
        ast_type = gast.AST
        for field in node._fields:
            old = getattr(node, field, None)
            if old.__class__ is list:
                new = []
                for item in old:
                    if isinstance(item, ast_type):
                        item = self.visit(item)
                        if item is None:
                            continue
                        if item.__class__ is list:
                            new.extend(item)
                            continue
                    new.append(item)
                old[:] = new
            elif isinstance(old, ast_type):
                new_node = self.visit(old)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node

    def visit_block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            new = self.visit(s)
            if new is None:
                continue
            out.extend(new if isinstance(new, list) else [new])
        return out


def transform(converter_cls, node, ctx: Context):
    """Run one converter over a function node (the convention each converter module follows)."""
    return converter_cls(ctx).visit(node)
