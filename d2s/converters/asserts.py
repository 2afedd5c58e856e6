"""`assert test, msg` -> `_d2s.assert_(test, lambda: msg)`.

A Python test is checked at trace time exactly as `assert` would; a tensor test becomes a
graph assertion checked when the program runs. The message stays lazy, as in Python.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base

HANDLES = (gast.Assert,)  # the pass is skipped when none of these is present
CREATES = (gast.Call, gast.Lambda)
NEEDS_ANALYSIS = False


class Asserts(Base):
    def visit_Assert(self, node):
        node = self.generic_visit(node)
        if node.msg is None:
            return templates.replace(f"{RESERVED}.assert_(test)", test=node.test)
        return templates.replace(f"{RESERVED}.assert_(test, lambda: msg)", test=node.test,
                                 msg=node.msg)


def transform(node, ctx):
    return Asserts(ctx).visit(node)
