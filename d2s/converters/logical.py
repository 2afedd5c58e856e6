"""`and`, `or`, `not` and chained comparisons.

    a and b or not c   ->   _d2s.or_(_d2s.and_(a, lambda: b), lambda: _d2s.not_(c))
    a < b < c          ->   _d2s.and_(a < b, lambda: b < c)
    a in b             ->   _d2s.in_(a, b)

The right operands become lambdas so Python's short-circuit is kept: the operator evaluates
them only when the left operand does not decide (for a tensor, only inside the graph branch).
A middle operand of a chained comparison that is not a name, constant or attribute is
evaluated once into a temporary (`(_cmp_1 := f(x)) < c`); the lambdas read the temporary. A
walrus written by the user in the right operand of `and`/`or` is left alone (inside a lambda
it would bind a name of the lambda).
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base

HANDLES = (gast.BoolOp, gast.UnaryOp, gast.Compare)  # the pass is skipped when none of these is present
CREATES = (gast.Call, gast.Lambda, gast.NamedExpr)
NEEDS_ANALYSIS = False


def _has_walrus(node) -> bool:
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(node))


def _simple(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant)) or (
        isinstance(node, gast.Attribute) and _simple(node.value))


class Logical(Base):
    def __init__(self, ctx):
        super().__init__(ctx)
        self._temps: dict = {}

    def _reuse(self, operand):
        """A middle operand appears twice: bound by a walrus where first compared, then read
        by name."""
        temp = self._temps.get(id(operand))
        return operand if temp is None else templates.name(temp)

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        if any(_has_walrus(v) for v in node.values[1:]):
            return node
        fn = "and_" if isinstance(node.op, gast.And) else "or_"
        lambdas = [templates.replace_as_expression("lambda: v", v=v) for v in node.values[1:]]
        return templates.replace_as_expression(f"{RESERVED}.{fn}(first, rest)",
                                               first=node.values[0], rest=lambdas)

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        return templates.replace_as_expression(f"{RESERVED}.not_(x)", x=node.operand)

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) == 1:
            return _membership(node)
        if any(_has_walrus(c) for c in node.comparators):
            return node
        operands = [node.left] + node.comparators
        if not all(_simple(c) for c in operands[2:-1]):
            return node  # a walrus inside a lambda would bind a name of the lambda
        for i in range(1, len(operands) - 1):
            if not _simple(operands[i]):  # evaluate it once, into a fresh temporary
                temp = self.ctx.namer.new("cmp")
                pairs_value = operands[i]
                operands[i] = templates.replace_as_expression("(t := v)", t=temp,
                                                              v=pairs_value)
                operands[i].target.ctx = gast.Store()
                self._temps[id(operands[i])] = temp
        pairs = [_membership(gast.Compare(left=self._reuse(operands[i]), ops=[op],
                                          comparators=[operands[i + 1]]))
                 for i, op in enumerate(node.ops)]
        lambdas = [templates.replace_as_expression("lambda: v", v=p) for p in pairs[1:]]
        return templates.replace_as_expression(f"{RESERVED}.and_(first, rest)",
                                               first=pairs[0], rest=lambdas)


def _membership(node):
    """`a in b` -> `_d2s.in_(a, b)` (`not in` -> `_d2s.not_in`): a tensor on either side
    makes it a graph op (a list's `in` would ask for the truth of a tensor comparison)."""
    op = node.ops[0]
    if not isinstance(op, (gast.In, gast.NotIn)):
        return node
    fn = "in_" if isinstance(op, gast.In) else "not_in"
    return templates.replace_as_expression(f"{RESERVED}.{fn}(a, b)", a=node.left,
                                           b=node.comparators[0])


def transform(node, ctx):
    return Logical(ctx).visit(node)
