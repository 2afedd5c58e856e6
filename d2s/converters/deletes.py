"""`del name` inside an `if`, `for` or `while` unbinds the name on that path only.

    if c:                      if c:
        del cache       ->         cache = _d2s.Undefined('cache')

The branch and loop converters make the bodies functions whose state is what they bind: as
an assignment of "unbound" the deleted name is state like any other. After a tensor `if`, a
tensor deleted on one path is read-checked (`operators.unbound`: eager's UnboundLocalError
where, and only where, a path that deleted it reads it); any use of the unbound value raises
`UndefinedNameError`, an `UnboundLocalError`. A `del` of a subscript or attribute is left as
it is (it mutates an object), and so is a `del` at the top level of the function, which no
converter moves. Runs before `lists`, `loops` and `ifelse`, which then see the name bound.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base

HANDLES = (gast.Delete,)  # the pass is skipped when the function has no `del`
CREATES = (gast.Assign, gast.Call)
NEEDS_ANALYSIS = False

_BODIES = (gast.If, gast.For, gast.While)


class Deletes(Base):
    """Only names local to the function: `del` of a global needs a `global` statement,
    which the converters keep as written."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.depth = 0  # enclosing if / for / while statements in the current function

    def visit_FunctionDef(self, node):
        depth, self.depth = self.depth, 0
        try:
            return self.visit_in_scope(node)
        finally:
            self.depth = depth

    def _visit_body(self, node):
        self.depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.depth -= 1

    visit_If = visit_For = visit_While = _visit_body

    def visit_Delete(self, node):
        if not self.depth:
            return node
        names = [t for t in node.targets if isinstance(t, gast.Name) and self.is_local_here(
            t.id)]
        if not names:
            return node
        out = []
        rest = [t for t in node.targets if not any(t is n for n in names)]
        if rest:  # (`del d[k], y`: the subscript stays a `del`)
            node.targets = rest
            out.append(node)
        for n in names:
            out.extend(templates.replace(f"name = {RESERVED}.Undefined(text)", name=n.id,
                                         text=gast.Constant(value=n.id, kind=None)))
        return out


def transform(node, ctx):
    return Deletes(ctx).visit(node)
