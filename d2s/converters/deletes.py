"""`del name` inside an `if`, `for` or `while` unbinds the name on that path only.

    if c:                      if c:
        del cache       ->         cache = _d2s.Undefined('cache')

The branch and loop converters make the bodies functions whose state is what they bind: as
an assignment of "unbound" the deleted name is state like any other. After a tensor `if`, a
tensor deleted on one path is read-checked (`operators.unbound`: eager's UnboundLocalError
where, and only where, a path that deleted it reads it); any use of the unbound value raises
`UndefinedNameError`, an `UnboundLocalError`. A `del` of an attribute is left as it is (it
mutates an object), and so is a `del` of a name at the top level of the function, which no
converter moves. A `del` of an item (not a slice) is a call, anywhere:

    del d["k"]                 ->  _d2s.del_item(d, 'k')

(a dict key that a tensor `if` or graph loop left present on some paths only raises eager's
KeyError where it is absent: `operators.key_flags.del_item`). Runs before `lists`, `loops`
and `ifelse`, which then see the name bound.
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
        if not any(self._item(t) or self.depth and isinstance(t, gast.Name) and
                   self.is_local_here(t.id) for t in node.targets):
            return node
        out, rest = [], []
        for t in node.targets:  # (in order: `del d[k], y`)
            if self._item(t):
                out.extend(self._flush(rest, node))
                out.extend(templates.replace(f"{RESERVED}.del_item(obj, key)", obj=t.value,
                                             key=t.slice))
            elif self.depth and isinstance(t, gast.Name) and self.is_local_here(t.id):
                out.extend(self._flush(rest, node))
                out.extend(templates.replace(f"name = {RESERVED}.Undefined(text)", name=t.id,
                                             text=gast.Constant(value=t.id, kind=None)))
            else:
                rest.append(t)
        return out + self._flush(rest, node)

    @staticmethod
    def _item(t) -> bool:
        """`del d[k]`, also a tuple key (`del d[2, 3]`), not slices (`del a[1:, 0]`)."""
        if not isinstance(t, gast.Subscript):
            return False
        parts = t.slice.elts if isinstance(t.slice, gast.Tuple) else [t.slice]
        return not any(isinstance(p, gast.Slice) for p in parts)

    @staticmethod
    def _flush(rest: list, node) -> list:
        """The targets left as a `del` statement (attributes, slices, globals), in order."""
        if not rest:
            return []
        kept = gast.Delete(targets=list(rest))
        rest.clear()
        return [gast.copy_location(kept, node)]


def transform(node, ctx):
    return Deletes(ctx).visit(node)
