"""`and`, `or`, `not` and chained comparisons.

    a and b or not c   ->   _d2s.or_(_d2s.and_(a, lambda: b), lambda: _d2s.not_(c))
    a < b < c          ->   _d2s.and_(a < b, lambda: b < c)
    a in b             ->   _d2s.in_(a, b)
    a == b             ->   _d2s.eq_(a, b)     (lists of tensors compare item by item)
    a is None          ->   _d2s.is_none(a)    (`p.grad`: whether the run reached `p`)
    seen <= {1, 2}     ->   _d2s.set_op(seen, '<=', {1, 2})   (what may be sets: `set_operands`)

The right operands become lambdas so Python's short-circuit is kept: the operator evaluates
them only when the left operand does not decide (for a tensor, only inside the graph branch).
A middle operand of a chained comparison that is not a name, constant or attribute is
evaluated once into a temporary (`(_cmp_1 := f(x)) < c`); the lambdas read the temporary. In a
condition (`if`/`while`/`assert` tests, conditional expressions) `and`/`or` become
`truth_and_`/`truth_or_`, which combine truth values. A walrus written by the user in the right
operand of `and`/`or` of an `if` test is hoisted into statements before the `if`
(`predicates.hoist_walrus`), and so is one of an assignment, a `return` or an expression
statement (`predicates.hoist_value_walrus`, also a conditional expression's test there),
and a `while` test's (computed before the loop and again at the end of the body);
elsewhere (inside a lambda or comprehension, a branch of a conditional
expression) it is left alone: inside a lambda it would bind a name of the lambda. Comprehension filters become `_d2s.comp_filter(c)`, and a `match` with guards
becomes one `match` per case under a tensor-able `if` (`predicates.match_guards`).
"""
from __future__ import annotations

import gast

from ..pyct import activity, templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base
from . import predicates
from .set_operands import (COMPARE, WithGlobals, sequence_like, sequence_names, set_names,
                           set_operands)

HANDLES = (gast.BoolOp, gast.UnaryOp, gast.Compare, gast.comprehension, gast.Match)
CREATES = (gast.Call, gast.Lambda, gast.NamedExpr, gast.If, gast.Assign)
NEEDS_ANALYSIS = False


def _has_walrus(node) -> bool:
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(node))


def _simple(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant)) or (
        isinstance(node, gast.Attribute) and _simple(node.value))


_mark_test = predicates.mark_test


class Logical(Base):
    def __init__(self, ctx, root=None):
        super().__init__(ctx)
        self._temps: dict = {}
        # (`ctx.present`, where the transpiler gives it: the node types of the function
        # before this pass, whose own walruses are made after the statement's look)
        self._walrus = gast.NamedExpr in getattr(ctx, "present", (gast.NamedExpr,))
        self._root = root  # (the converted function: the names it may bind to sets)

    def visit_If(self, node):
        pre = predicates.hoist_walrus(node, self.ctx.namer)
        _mark_test(node.test)
        node = self.generic_visit(node)
        return self.visit_block(pre) + [node] if pre else node

    def _value_walrus(self, node):
        if not self._walrus:  # (no statement holds a walrus: none to hoist, no walk to tell)
            return self.generic_visit(node)
        pre = predicates.hoist_value_walrus(node, self.ctx.namer)
        node = self.generic_visit(node)
        return self.visit_block(pre) + [node] if pre else node

    visit_Assign = visit_AugAssign = visit_AnnAssign = _value_walrus
    visit_Return = visit_Expr = _value_walrus

    def visit_While(self, node):
        pre = predicates.hoist_while_walrus(node, self.ctx.namer)
        _mark_test(node.test)
        node = self.generic_visit(node)
        return self.visit_block(pre) + [node] if pre else node

    def visit_IfExp(self, node):
        _mark_test(node.test)
        return self.generic_visit(node)

    def visit_Assert(self, node):
        _mark_test(node.test)
        return self.generic_visit(node)

    def visit_ListComp(self, node):
        out = predicates.filtered_comprehension(node, self)
        return out if out is not None else self.generic_visit(node)

    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        for g in node.generators:  # (for comp_filter's message: the keys depend on data)
            g.d2s_kind = "dict"
        return self.generic_visit(node)

    def visit_SetComp(self, node):
        for g in node.generators:
            g.d2s_kind = "set"
        return self.generic_visit(node)

    def visit_comprehension(self, node):
        node = self.generic_visit(node)
        kind = templates.const(getattr(node, "d2s_kind", "list"))
        node.ifs = [templates.replace_as_expression(f"{RESERVED}.comp_filter(c, kind)", c=c,
                                                    kind=kind)
                    for c in node.ifs]
        return node

    def visit_Match(self, node):
        out = predicates.match_guards(node, self.ctx.namer)
        if out is None:
            return self.generic_visit(node)
        return self.visit_block(out)

    def _compare(self, node):
        """A one-operator comparison as converted code makes it: `_membership`'s, or an order
        comparison of what may be sets (`set_operands`) -> `_d2s.set_op(a, '<=', b)`."""
        op = COMPARE.get(node.ops[0].__class__)
        names = frozenset() if self._root is None else sequence_names(self._root)
        if op is not None and any(sequence_like(o, names) for o in (node.left,
                                                                   node.comparators[0])):
            return templates.replace_as_expression(  # (`tuple(x.tolist()) < (1.5, 0.0)`)
                f"{RESERVED}.seq_order(a, op, b)", a=node.left, b=node.comparators[0],
                op=gast.Constant(op, None))
        if op is None or self._root is None or not set_operands(
                node, WithGlobals(set_names(self._root), self.ctx.namespace)):
            return _membership(node)
        return templates.replace_as_expression(f"{RESERVED}.set_op(a, op, b)", a=node.left,
                                               b=node.comparators[0], op=gast.Constant(op, None))

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
        if getattr(node, "d2s_test", False):
            fn = "truth_" + fn  # a condition: truth values (see `_mark_test`)
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
            return self._compare(node)
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
                activity.walrus_made()  # (the analyses from now on look for it)
                operands[i].target.ctx = gast.Store()
                self._temps[id(operands[i])] = temp
        pairs = [self._compare(gast.Compare(left=self._reuse(operands[i]), ops=[op],
                                            comparators=[operands[i + 1]]))
                 for i, op in enumerate(node.ops)]
        lambdas = [templates.replace_as_expression("lambda: v", v=p) for p in pairs[1:]]
        return templates.replace_as_expression(f"{RESERVED}.and_(first, rest)",
                                               first=pairs[0], rest=lambdas)


# comparisons whose Python form asks for the truth of tensor comparisons (a list's `in` and
# `==` compare item by item): operators that make them graph ops where tensors take part
_ITEMWISE = {gast.In: "in_", gast.NotIn: "not_in", gast.Eq: "eq_", gast.NotEq: "ne_"}
# `is None` / `is not None`: whether backward() reached a parameter can be decided per run
_NONE_TESTS = {gast.Is: "is_none", gast.IsNot: "is_not_none"}


def _membership(node):
    """`a in b` -> `_d2s.in_(a, b)` (`not in` -> `_d2s.not_in`, `==` -> `_d2s.eq_`, `!=` ->
    `_d2s.ne_`): a tensor on either side makes it a graph op (a list's `in` / `==` would ask
    for the truth of a tensor comparison)."""
    fn = _ITEMWISE.get(type(node.ops[0]))
    if fn is None:
        return _none_test(node)
    return templates.replace_as_expression(f"{RESERVED}.{fn}(a, b)", a=node.left,
                                           b=node.comparators[0])


def _none_test(node):
    """`a is None` -> `_d2s.is_none(a)`, `a is not None` -> `_d2s.is_not_none(a)`;
    `type(v) is C` -> `_d2s.type_is(type(v), C)` (a class the run decides: `run_types`)."""
    fn = _NONE_TESTS.get(type(node.ops[0]))
    right = node.comparators[0]
    if fn is not None and (_type_call(node.left) or _type_call(right)):
        fn = "type_is" if fn == "is_none" else "type_is_not"
        return templates.replace_as_expression(f"{RESERVED}.{fn}(a, b)", a=node.left, b=right)
    if fn is None or not (isinstance(right, gast.Constant) and right.value is None):
        return node
    return templates.replace_as_expression(f"{RESERVED}.{fn}(a)", a=node.left)


def _type_call(node) -> bool:
    """Whether `node` is `type(v)` (or, converted, `_d2s.type_(v)`)."""
    if not (isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords):
        return False
    f = node.func
    return isinstance(f, gast.Name) and f.id == "type" or isinstance(f, gast.Attribute) and \
        f.attr == "type_" and isinstance(f.value, gast.Name) and f.value.id == RESERVED


def transform(node, ctx):
    return Logical(ctx, node).visit(node)
