"""List mutation becomes assignment, so a list changed in a branch or loop is state.

    out.append(y)        ->   out = _d2s.list_append(out, y)
    v = stack.pop()      ->   stack, v = _d2s.list_pop(stack)

On a Python list the operators mutate it in place and return it (aliases see the change, as
in Python); inside a graph loop the list is a tensor array and they return the new array.
Runs before the loop and branch converters, which then see the list as a bound name.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base

HANDLES = (gast.Call,)  # the pass is skipped when none of these is present
CREATES = (gast.Assign,)
NEEDS_ANALYSIS = False


def _method_call(node, method: str):
    """The receiver name of `name.method(...)`, or None."""
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == method and isinstance(node.func.value, gast.Name)
            and not node.keywords):
        return node.func.value.id
    return None


class Lists(Base):
    """Only lists held in local variables are rewritten: assigning a global or closure list
    would make its name local to the function."""

    def visit_FunctionDef(self, node):
        return self.visit_in_scope(node)  # its local names are its `LOCALS`

    def _local(self, name):
        return name if name is not None and self.is_local_here(name) else None

    def visit_Expr(self, node):
        node = self.generic_visit(node)
        target = self._local(_method_call(node.value, "append"))
        if target is not None and len(node.value.args) == 1:
            return templates.replace(f"target = {RESERVED}.list_append(target, value)",
                                     target=target, value=node.value.args[0])
        target = self._local(_method_call(node.value, "pop"))
        if target is not None:
            return templates.replace(f"target = {RESERVED}.list_pop(target, args)[0]",
                                     target=target, args=node.value.args)
        return node

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        target = self._local(_method_call(node.value, "pop"))
        if target is None or len(node.targets) != 1:
            return node
        return templates.replace(f"target, result = {RESERVED}.list_pop(target, args)",
                                 target=target, result=node.targets[0], args=node.value.args)


def transform(node, ctx):
    return Lists(ctx).visit(node)
