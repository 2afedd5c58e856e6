"""The `builtin_calls` and `call_trees` passes in one walk over the function.

Both are expression passes over every node (a walk each of a 10,000-line function costs
about 0.2 s), and run one after the other. Their walks share one: each call is converted by
`builtin_calls` (its parts first, by this walk), then routed by `call_trees`, which leaves
every call `builtin_calls` writes (`_d2s.len_(x)`, `_d2s.shape(x)`) alone and sees every
user call once, as when the passes run one after the other: the code is the same. Code
levels and pass logging still run the two passes one at a time.
"""
from __future__ import annotations

from .builtin_calls import BuiltinCalls
from .call_trees import CallTrees

FUSES = ("builtin_calls", "call_trees")
NEEDS_ANALYSIS = False  # (neither pass needs it, nor creates a node type a later pass handles)
CREATES = ()


class BuiltinsThenCalls(BuiltinCalls):
    route = CallTrees.route
    _leave_alone = CallTrees._leave_alone
    _resolve = CallTrees._resolve

    def visit_Call(self, node):
        return self.route(super().visit_Call(node))


def transform(node, ctx):
    return BuiltinsThenCalls(ctx).visit(node)
