"""List mutation becomes assignment, so a list changed in a branch or loop is state.

    out.append(y)        ->   out = _d2s.list_append(out, y)
    d.update({"c": v})   ->   d = _d2s.dict_changed(d, d.update({"c": v}))   (setdefault too)
    out.extend(ys)       ->   out = _d2s.list_method(out, 'extend', ys)   (insert, clear, remove,
                                                                          reverse)
    v = stack.pop()      ->   stack, v = _d2s.list_pop(stack)
    s = s + stack.pop()  ->   stack, _pop_1 = _d2s.list_pop(stack); s = s + _pop_1

A pop inside a larger expression (an assignment's value, `+=`, `return`) is taken out before
the statement only when nothing evaluated before it in the statement can see the difference:
no call, no use of the list's name, and no `and`/`or`/conditional/comprehension around it.

On a Python list the operators mutate it in place and return it (aliases see the change, as
in Python); inside a graph loop the list is a tensor array and they return the new array.
Runs before the loop and branch converters, which then see the list as a bound name.
"""
from __future__ import annotations

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base
from . import nested_comps

HANDLES = (gast.Call, gast.ListComp, gast.GeneratorExp)  # the pass is skipped without them
CREATES = (gast.Assign, gast.Call, gast.Lambda, gast.ListComp)
NEEDS_ANALYSIS = False


def _method_call(node, method: str):
    """The receiver name of `name.method(...)`, or None."""
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == method and isinstance(node.func.value, gast.Name)
            and not node.keywords):
        return node.func.value.id
    return None


def _dict_method(node):
    """The receiver name of a call that adds keys to a dict: `name.setdefault(k[, v])`, or
    `name.update({...})` / `name.update(k=v)` (a dict display or keywords: other objects have
    `update` methods too), or None."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and isinstance(node.func.value, gast.Name)):
        return None
    args, attr = node.args, node.func.attr
    if attr == "setdefault" and 1 <= len(args) <= 2 and not node.keywords or attr == "update" \
            and (len(args) == 1 and isinstance(args[0], gast.Dict) and not node.keywords
                 or not args and node.keywords and all(k.arg for k in node.keywords)):
        return node.func.value.id
    return None


# methods that change a list in place, besides append and pop (`list_method`)
_CHANGING_METHODS = ("extend", "insert", "clear", "remove", "reverse")


class Lists(Base):
    """Only lists held in local variables are rewritten: assigning a global or closure list
    would make its name local to the function."""

    # `.pop` calls visited so far: a statement with none in it has nothing to hoist (its
    # expressions are not searched again: linear in a huge function's size)
    _pops = 0

    def visit_FunctionDef(self, node):
        return self.visit_in_scope(node)  # its local names are its `LOCALS`

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if isinstance(node.func, gast.Attribute) and node.func.attr == "pop":
            self._pops += 1
        return node

    def _local(self, name):
        return name if name is not None and self.is_local_here(name) else None

    def visit_Expr(self, node):
        pops = self._pops
        node = self.generic_visit(node)
        target = self._local(_method_call(node.value, "append"))
        if target is not None and len(node.value.args) == 1:
            return templates.replace(f"target = {RESERVED}.list_append(target, value)",
                                     target=target, value=node.value.args[0])
        target = self._local(_method_call(node.value, "pop"))
        if target is not None:
            return templates.replace(f"target = {RESERVED}.list_pop(target, args)[0]",
                                     target=target, args=node.value.args)
        for method in _CHANGING_METHODS:
            target = self._local(_method_call(node.value, method))
            if target is not None:
                return templates.replace(
                    f"target = {RESERVED}.list_method(target, method, args)", target=target,
                    method=gast.Constant(method, None), args=node.value.args)
        target = self._local(_dict_method(node.value))
        if target is not None:  # (the dict is state of a loop or `if` around it)
            return templates.replace(f"target = {RESERVED}.dict_changed(target, call)",
                                     target=target, call=node.value)
        return self._hoist(node, ("value",), pops)

    def visit_Assign(self, node):
        pops = self._pops
        node = self.generic_visit(node)
        target = self._local(_method_call(node.value, "pop"))
        if target is None or len(node.targets) != 1:
            return self._hoist(node, ("value",), pops)
        return templates.replace(f"target, result = {RESERVED}.list_pop(target, args)",
                                 target=target, result=node.targets[0], args=node.value.args)

    def visit_ListComp(self, node):
        """`[elt for target in xs]` (one `for`, no filter) -> `_d2s.comp_map(xs, lambda _v:
        [elt for target in (_v,)][0], 'list')`: the same list for a Python iterable, one
        graph loop building a tensor array when `xs` is one (a list grown in a graph loop).
        (A filtered comprehension is `predicates_comp`'s, converted before this pass.)"""
        node = self.generic_visit(node)
        gens = node.generators
        if any(g.is_async for g in gens) or any(isinstance(n, _NOT_IN_LAMBDA)
                                                for n in gast.walk(node)):
            return node
        if len(gens) > 1:  # (nested_comps: a `comp_map` per `for`)
            acc = self._accumulator(node.elt)
            if acc is not None:
                return nested_comps.nested(node, self.ctx.namer, acc)
            if isinstance(node, gast.ListComp):
                return nested_comps.unfiltered(node, self.ctx.namer)
            return nested_comps.generator(node, self.ctx.namer)
        if gens[0].ifs:
            return node
        item = self.ctx.namer.new("item")
        one = gast.ListComp(elt=node.elt, generators=[gast.comprehension(
            target=gens[0].target, iter=gast.Tuple(elts=[templates.name(item)],
                                                   ctx=gast.Load()), ifs=[], is_async=0)])
        fn = templates.replace_as_expression("lambda item: one[0]", item=item, one=one)
        fn.args.args[0].ctx = gast.Param()
        kind = "list" if isinstance(node, gast.ListComp) else "gen"
        acc = self._accumulator(node.elt)
        if acc is not None:  # a filtered comprehension's items (`predicates_comp`)
            return templates.replace_as_expression(
                f"{RESERVED}.comp_map(xs, fn, kind, acc)", xs=gens[0].iter, fn=fn,
                kind=gast.Constant(kind, None), acc=acc)
        return templates.replace_as_expression(f"{RESERVED}.comp_map(xs, fn, kind)",
                                               xs=gens[0].iter, fn=fn,
                                               kind=gast.Constant(kind, None))

    def _accumulator(self, elt):
        """The name of the list a filtered comprehension appends to, where `elt` is its
        `_acc.item(cond, value)` (`predicates`'s rewrite), else None."""
        f = getattr(elt, "func", None)
        if (isinstance(elt, gast.Call) and isinstance(f, gast.Attribute) and f.attr == "item"
                and isinstance(f.value, gast.Name) and f.value.id.startswith("_acc_")
                and f.value.id in self.ctx.namer.generated):
            return templates.name(f.value.id)
        return None

    visit_GeneratorExp = visit_ListComp

    def visit_AugAssign(self, node):
        pops = self._pops
        node = self.generic_visit(node)
        return self._hoist(node, ("target", "value"), pops)

    def visit_Return(self, node):
        pops = self._pops
        node = self.generic_visit(node)
        return self._hoist(node, ("value",), pops)

    def _hoist(self, stmt, fields: tuple, pops_before: int):
        """`stmt` with each safe `name.pop(...)` in its expression `fields` (in the order
        Python evaluates them) taken out into a statement before it (`pops_before`: `_pops`
        before its expressions were visited)."""
        if self._pops == pops_before:
            return stmt
        before = []
        while True:
            found = _first_pop(stmt, fields, self._local)
            if found is None:
                break
            parent, field, index, call, target = found
            tmp = self.ctx.namer.new("pop")
            before += templates.replace(f"target, result = {RESERVED}.list_pop(target, args)",
                                        target=target, result=tmp, args=call.args)
            if index is None:
                setattr(parent, field, templates.name(tmp))
            else:
                getattr(parent, field)[index] = templates.name(tmp)
        return before + [stmt] if before else stmt


_OPAQUE = (gast.BoolOp, gast.IfExp, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
           gast.GeneratorExp, gast.NamedExpr, gast.Await, gast.Yield, gast.YieldFrom,
           gast.Dict)


_NOT_IN_LAMBDA = (gast.NamedExpr, gast.Await, gast.Yield, gast.YieldFrom)


def _first_pop(stmt, fields: tuple, local):
    """(parent, field, index, call, list name) of the first `name.pop(...)` Python evaluates
    in `stmt`'s expression `fields`, when everything evaluated before it is free of calls and
    of the list's name, and it is not under `and`/`or`/`x if c else y`/a comprehension/a
    lambda/a dict display; else None. Its argument runs right before the pop either way."""
    seen: list = []  # nodes evaluated before the pop

    def walk(node, parent, field, index):
        if isinstance(node, _OPAQUE):
            seen.append(node)
            return None
        if isinstance(node, gast.Call):
            target = local(_method_call(node, "pop"))
            if target is not None and len(node.args) <= 1 and not any(
                    isinstance(n, _OPAQUE) for a in node.args for n in gast.walk(a)):
                return parent, field, index, node, target
        return children(node, _order(node))

    def children(node, names):
        for f in names:
            value = getattr(node, f, None)
            items = value if isinstance(value, list) else [value]
            for k, child in enumerate(items):
                if isinstance(child, gast.expr):
                    hit = walk(child, node, f, k if isinstance(value, list) else None)
                    if hit is not None:
                        return hit
                elif child is not None and isinstance(child, gast.AST):
                    seen.append(child)  # (a keyword: evaluated, never searched)
        seen.append(node)
        return None

    hit = children(stmt, fields)
    if hit is None:
        return None
    name = hit[4]
    if any(isinstance(n, (gast.Call, *_OPAQUE)) or (isinstance(n, gast.Name) and n.id == name)
           for s in seen for n in gast.walk(s)):
        return None
    return hit


def _order(node) -> tuple:
    """Child fields in the order Python evaluates them."""
    if isinstance(node, gast.Call):
        return ("func", "args", "keywords")
    return node._fields


def transform(node, ctx):
    return Lists(ctx).visit(node)
