"""Calls of built-ins whose meaning depends on tensors: `print`, `len`, `range`,
`enumerate`, `max`, `min`, `all`, `any`, `sum`, `reversed`, `list`, `tuple`, `bool`, `int`,
`float`, `isinstance`; and `x.shape` and `x.size`, whose unknown dims must be read at run time;
and item stores, which a dict given a key the program computes (`int(t)`) must see; and set
algebra of what may be sets (`set_operands`), which a set holding such values must see.

    print(x, 'n=', n, sep=' ')   ->   _d2s.print_(x, 'n=', n, sep=' ')
    len(x)                       ->   _d2s.len_(x)
    x.shape[0]                   ->   _d2s.shape(x)[0]
    y.name                       ->   _d2s.tensor_attribute(y, 'name')   (`.dtype` too)
    y.name = v                   ->   _d2s.set_tensor_name(y, v)
    table[k] = v                 ->   _d2s.set_item(v, table, k)
    {k: v, 0: w}                 ->   _d2s.dict_display((k, v), (0, w))
    zip(*pairs)                  ->   _d2s.zip_star(pairs)
    seen & {(0, 1)}              ->   _d2s.set_op(seen, '&', {(0, 1)})
    [*seen]                      ->   [*_d2s.set_items(seen, '`*` unpacking')]
    {p, (0, 1)}                  ->   _d2s.made_set({p, (0, 1)})   (`operators.made_sets`)
    reduce(set.union, sets)      ->   reduce(_d2s.unbound_set_method(set.union), sets)
    d.get(k, v)                  ->   _d2s.dict_get(d)(k, v)
    d.setdefault(k, v)           ->   _d2s.dict_setdefault(d)(k, v)
    LABELS[i]                    ->   _d2s.getitem_(LABELS, i)   (`operators.python_picks`)

A name is rewritten only if it really is the built-in here (not a local, global or closure
variable of the same name). Each operator behaves exactly like the built-in on Python values.
"""
from __future__ import annotations

import builtins
import math
import operator

import gast
import numpy as np

from runtime.program.numpy_arrays import NAMES as NUMPY_ARRAY_CALLS

from ..call_policy import TENSOR_FLAGS
from ..pyct import templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base
from .set_operands import (
    BINARY,
    WithGlobals,
    added_dict,
    dict_names,
    set_like,
    set_names,
    set_operands,
)

# the pass is skipped when none of these is present
HANDLES = (gast.Call, gast.Attribute, gast.BinOp, gast.JoinedStr, gast.AugAssign, gast.Dict,
           gast.Set, gast.SetComp, gast.Subscript)  # (`d[k] = v`: `_d2s.set_item`)
CREATES = ()
NEEDS_ANALYSIS = False

# `d[k] op= v` -> the `operator` function `aug_item` applies
_IN_PLACE = {gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.Div: "itruediv",
             gast.FloorDiv: "ifloordiv", gast.Mod: "imod", gast.BitOr: "ior",
             gast.BitAnd: "iand"}

# built-in name -> operator name in d2s.operators
BUILTINS = {
    "print": "print_",
    "len": "len_",
    "range": "range_",
    "bool": "bool_",
    "int": "int_",
    "float": "float_",
    "round": "round_",
    "divmod": "divmod_",
    "isinstance": "isinstance_",
    "enumerate": "enumerate_",
    "zip": "zip_",
    "max": "max_",
    "min": "min_",
    "all": "all_",
    "any": "any_",
    "sum": "sum_",
    "reversed": "reversed_",
    "list": "list_",
    "tuple": "tuple_",
    "str": "str_",  # (the text of a tensor exists only when the program runs: refused)
    "repr": "repr_",
    "format": "format_",
    "sorted": "sorted_",  # (these three refuse a set a tensor `if` left undecided)
    "set": "set_",
    "frozenset": "frozenset_",
    "type": "type_",  # (of a set converted code made: `set`, `operators.made_sets`)
    "hasattr": "hasattr_",  # (of a value None or a number on some runs: `type_queries`)
    "id": "id_",  # (of what the call was given: refused, `operators.identity_calls`)
    "hash": "hash_",
    "getattr": "getattr_",  # (of a traced tensor, as `x.name`: `operators.attribute_reads`)
    "vars": "vars_",
}

# `math` functions of one number (or two: `isclose`, `hypot`, `atan2`, `fmod`, `log(v, base)`)
# that a value the program computes may give
# (`operators.math_calls`): `math.sqrt(i)` -> `_d2s.math_(math.sqrt)(i)`
MATH_FUNCTIONS = frozenset(("sqrt", "exp", "log", "sin", "cos", "tanh", "fabs", "floor", "ceil",
                            "log2", "log10", "isfinite", "isnan", "isinf", "isclose", "hypot",
                            "atan2", "fmod"))

# `operator.lt(a, b)` & co.: as the operator written, `a < b` lexicographic of sequences
# holding computed numbers (`operators.sequence_order`), `a == b` item by item (`logical`)
COMPARISONS = {"lt": "seq_order(a, '<', b)", "le": "seq_order(a, '<=', b)",
               "gt": "seq_order(a, '>', b)", "ge": "seq_order(a, '>=', b)", "eq": "eq_(a, b)",
               "ne": "ne_(a, b)"}
# module -> its functions that converted code calls through d2s (`plain_runs` folds no call
# of them)
MODULE_FUNCTIONS = ((math, MATH_FUNCTIONS), (np, NUMPY_ARRAY_CALLS),
                    (operator, frozenset(COMPARISONS) | {"attrgetter"}))

# attributes a traced tensor answers as eager's Tensor only through d2s (`x.name` is None,
# not the program's `t3`; `x.numpy().dtype` NumPy's: `operators.tensor_attributes`)
TENSOR_ATTRIBUTES = ("name", "dtype")

# built-ins that iterate their arguments from this index on: given what may be a set, an
# item per item of it (`_d2s.set_items`, refused where the set holds computed values)
_ITERATES = {"iter": 0, "map": 1, "filter": 1}

# index expressions that are no number the program computes: `x[0]`, `x[1:]`, `x[:, i]`,
# `x[None]`, `x[...]`
_NO_COMPUTED_INDEX = (gast.Constant, gast.Slice, gast.Tuple)

# list methods that compare items (`lst.index(v)`): `_d2s.list_query(lst, 'index')(v)`
COMPARING_METHODS = ("index", "count", "sort")


_NOT_IN_LAMBDA = (gast.NamedExpr, gast.Await, gast.Yield, gast.YieldFrom)


class BuiltinCalls(Base):
    def visit_FunctionDef(self, node):
        # A function's locals (`LOCALS`) are read when a builtin's name is first looked up in
        # it (most functions call none); the pass binds no names, so they stay valid.
        return self.visit_in_scope(node)

    def visit_Lambda(self, node):
        return self.visit_in_scope(node)  # `lambda len: len(x)` calls its parameter

    def visit_Call(self, node):
        f = node.func
        if f.__class__ is gast.Subscript:
            f.called = True  # (`layers[i](x)`: `call_trees`'s `call_item`)
        if isinstance(f, gast.Name) and f.id == "print" and not self._shadowed("print"):
            # an f-string holding a tensor is formatted when the program runs
            node.args = [_print_text(a) for a in node.args]
        node = self.generic_visit(node)
        self._unpacked(node.args)
        node.args = [self._set_function(a) for a in node.args]
        first = _ITERATES.get(f.id) if isinstance(f, gast.Name) else None
        if first is not None and not self._shadowed(f.id):  # `map(fn, seen)`: an item per item
            node.args[first:] = [self._items(a, f"{f.id}()", True) for a in node.args[first:]]
        if isinstance(f, gast.Attribute) and f.attr in ("get", "setdefault"):
            # `d.get(k, v)` of a key a tensor `if` or loop set on one path (`key_flags`)
            node.func = templates.replace_as_expression(f"{RESERVED}.dict_{f.attr}(obj)",
                                                        obj=f.value)
            return node
        if isinstance(f, gast.Attribute) and f.attr in COMPARING_METHODS:
            node.func = templates.replace_as_expression(
                f"{RESERVED}.list_query(obj, '{f.attr}')", obj=f.value)
            return node
        if self._module_function(f, math, MATH_FUNCTIONS):
            node.func = templates.replace_as_expression(f"{RESERVED}.math_(f)", f=f)
            return node
        if self._module_function(f, np, NUMPY_ARRAY_CALLS):
            # `np.asarray(t)`, `np.float32(v)`: NumPy's of a tensor, as `__array__` gives it
            # eagerly (`runtime/program/numpy_arrays.py`)
            node.func = templates.replace_as_expression(f"{RESERVED}.numpy_(f)", f=f)
            return node
        if self._module_function(f, operator, ("attrgetter",)):
            # `operator.attrgetter("shape")`: reads as `getattr(x, "shape")` does
            node.func = templates.parse_expr(f"{RESERVED}.attrgetter_")
            return node
        if self._module_function(f, operator, COMPARISONS) and len(node.args) == 2 and not \
                node.keywords and not any(isinstance(a, gast.Starred) for a in node.args):
            name = f.attr if isinstance(f, gast.Attribute) else f.id
            return templates.replace_as_expression(f"{RESERVED}.{COMPARISONS[name]}",
                                                   a=node.args[0], b=node.args[1])
        if self._builtin(f, "zip") and len(node.args) == 1 and isinstance(
                node.args[0], gast.Starred) and not node.keywords:
            # `zip(*pairs)` of a list the program grows: transposed when it runs
            node.func, node.args = templates.parse_expr(f"{RESERVED}.zip_star"), [
                node.args[0].value]
            return node
        if self._builtin(f, "map") and node.args and any(
                self._builtin(node.args[0], name) for name in ("list", "tuple")):
            # `map(list, zip(*pairs))`: d2s's `list` copies a tensor array
            node.args[0] = templates.parse_expr(f"{RESERVED}.{BUILTINS[node.args[0].id]}")
            return node
        if not (isinstance(f, gast.Name) and f.id in BUILTINS) or self._shadowed(f.id) or (
                f.id == "vars" and not node.args):  # (`vars()` is the caller's locals)
            return node
        node.func = templates.parse_expr(f"{RESERVED}.{BUILTINS[f.id]}")
        return node

    def visit_Assign(self, node):
        # `d[k] = v` -> `_d2s.set_item(v, d, k)`: a dict given a key the program computes
        # (`int(t)`) keeps its Python keys (`operators.computed_keys`)
        node = self.generic_visit(node)
        target = node.targets[0]
        if any(t.__class__ in (gast.Tuple, gast.List) for t in node.targets):
            node.value = self._items(node.value, "unpacking")  # (`a, b = seen`)
        if len(node.targets) == 1 and isinstance(target, gast.Attribute) and \
                target.attr == "name" and not _of_self(target):  # (a traced tensor's name
            # is the program's)
            return templates.replace(f"{RESERVED}.set_tensor_name(obj, value)",
                                     obj=target.value, value=node.value)
        if len(node.targets) == 1 and isinstance(target, gast.Attribute) and \
                target.attr in TENSOR_FLAGS and not (isinstance(node.value, gast.Name) and
                                                     node.value.id in self.ctx.namer.generated):
            # (`p.stop_gradient = v`: `tensor_flags`; not a branch's or loop body's own
            # store of its state, `p.stop_gradient = _p_stop_gradient_1`)
            return templates.replace(f"{RESERVED}.set_flag(value, obj, name)", value=node.value,
                                     obj=target.value, name=gast.Constant(
                                         value=target.attr, kind=None))
        if len(node.targets) != 1 or not isinstance(target, gast.Subscript):
            return node
        index = target.slice.elts if isinstance(target.slice, gast.Tuple) else [target.slice]
        if any(isinstance(i, gast.Slice) for i in index):
            return node  # (`x[i, :] = v`: a slice is no value to pass; never a dict key)
        if all(isinstance(i, gast.Constant) for i in index) and not (
                len(index) == 1 and isinstance(index[0].value, str)) and not (
                self.scopes and isinstance(target.value, gast.Name) and all(
                    type(i.value) in (int, float) for i in index)
                and target.value.id in dict_names(self.scopes[0])):
            return node  # (`x[0] = v`: no key the program computes; `d[0]` of a dict the
            # function made: it may hold one, `operators.computed_keys`; `d["loss"] = v`:
            # the order its keys were first stored in, `operators.key_ranks`)
        return templates.replace(f"{RESERVED}.set_item(value, obj, key)", value=node.value,
                                 obj=target.value, key=target.slice)

    def visit_JoinedStr(self, node):
        # an f-string used as a value (not a `print` argument): its text, or an error where
        # a piece is a tensor computed by the converted code
        node = self.generic_visit(node)
        return templates.replace_as_expression(f"{RESERVED}.text(value)", value=_fstring(node))

    def visit_Subscript(self, node):
        # `counts[e]` of a name bound to a dict, `e` not a constant: `_d2s.get_item(counts,
        # e)` (a key the program computes picks the item by value, `computed_keys`)
        node = self.generic_visit(node)
        if node.ctx.__class__ is gast.Load and self._dict_item(node):
            return templates.replace_as_expression(f"{RESERVED}.get_item(obj, key)",
                                                   obj=node.value, key=node.slice)
        # `seq[a:a + b]` with a bound that is not a number written in the code: a Python list
        # of numbers sliced by computed bounds (`operators.list_slices`)
        part = node.slice
        if not isinstance(node.ctx, gast.Load):
            return node
        if isinstance(part, gast.Slice):
            if all(_written_number(b) for b in (part.lower, part.upper, part.step)):
                return node
            return templates.replace_as_expression(
                f"{RESERVED}.slice_(seq, lower, upper, step)", seq=node.value,
                **{k: getattr(part, k) or gast.Constant(None, None) for k in ("lower", "upper",
                                                                              "step")})
        # `LABELS[int(t)]`: an index the program computes picks an item of a Python table
        # when the program runs (`operators.python_picks`); constant indices and slices
        # (`x[0]`, `x[:, 1]`, `d["loss"]`) pick nothing the run decides
        if getattr(node, "called", False) or part.__class__ in _NO_COMPUTED_INDEX or \
                part.__class__ is gast.UnaryOp and part.operand.__class__ is gast.Constant:
            return node
        return templates.replace_as_expression(f"{RESERVED}.getitem_(obj, index)",
                                               obj=node.value, index=part)

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, gast.Mod) and isinstance(node.left, gast.Constant) and \
                isinstance(node.left.value, str):  # "..." % args
            return templates.replace_as_expression(f"{RESERVED}.percent(fmt, args)",
                                                   fmt=node.left, args=node.right)
        if node.op.__class__ in BINARY and set_operands(node, self._set_names()):
            return templates.replace_as_expression(
                f"{RESERVED}.set_op(a, op, b)", a=node.left, b=node.right,
                op=gast.Constant(BINARY[node.op.__class__], None))
        return node

    def visit_AugAssign(self, node):
        # `seen -= other` of a name that may hold a set: `seen = _d2s.set_op(seen, '-=', other)`
        node = self.generic_visit(node)
        op, target = BINARY.get(node.op.__class__), node.target
        if self._dict_item(target) and node.op.__class__ in _IN_PLACE:
            # `counts[int(t)] += 1`: `_d2s.aug_item(_d2s.aug_read(counts, k), 'iadd', 1)`
            # (`computed_keys`; the item read before the right side runs, as Python does)
            return templates.replace(f"{RESERVED}.aug_item({RESERVED}.aug_read(obj, key), "
                                     "op, value)",
                                     obj=target.value, key=target.slice, value=node.value,
                                     op=gast.Constant(_IN_PLACE[node.op.__class__], None))
        if self.scopes and added_dict(node, self.scopes[0]):  # `names += d`: its keys
            node.value = self._items(node.value, "`+=`", True)
            return node
        if op is None or target.__class__ is not gast.Name or not (
                target.id in self._set_names() or set_like(node.value, self._set_names())):
            return node
        return templates.replace(f"t = {RESERVED}.set_op(t, op, b)", t=target, b=node.value,
                                 op=gast.Constant(op + "=", None))

    def _dict_item(self, node) -> bool:
        """`d[k]` of a name the function binds to a dict, `k` a name or call (a key the
        program may compute), not a constant or a slice."""
        return node.__class__ is gast.Subscript and node.value.__class__ is gast.Name and \
            node.slice.__class__ in (gast.Name, gast.Call, gast.BinOp) and bool(self.scopes) \
            and node.value.id in dict_names(self.scopes[0])

    def visit_Dict(self, node):
        # `{0: a, int(t): b}`: a key the program computes may equal another (`operators.
        # computed_keys`); displays of constant keys, or with `**`, stay as they are
        node = self.generic_visit(node)
        if any(k is None for k in node.keys) or all(
                k.__class__ in (gast.Constant, gast.JoinedStr) for k in node.keys):
            return node
        pairs = [gast.Tuple(elts=[k, v], ctx=gast.Load()) for k, v in zip(node.keys,
                                                                           node.values)]
        return gast.Call(func=templates.parse_expr(f"{RESERVED}.dict_display"), args=pairs,
                         keywords=[])

    def visit_Set(self, node):
        # a set display or comprehension: a set whose algebra refuses computed items where
        # the converter cannot see it is a set (`operators.made_sets`)
        node = self.generic_visit(node)
        if node.__class__ is gast.Set:
            self._unpacked(node.elts)
        return templates.replace_as_expression(f"{RESERVED}.made_set(s)", s=node)

    def visit_SetComp(self, node):
        self._iterated(node)
        return self.visit_Set(node)

    def visit_DictComp(self, node):
        # `{k: v for k in d}`: read an item per item, as `_items` (`[k for k in d]` is
        # `comp_map`'s, `lists`); one `for` without a filter is `_d2s.dict_comp(d, lambda
        # _item: [(k, v) for k in (_item,)][0])` (over a dict whose keys the run decides:
        # as the `for` statement converts, `operators.comp_arrays`)
        gen = node.generators[0]
        if len(node.generators) > 1 or gen.ifs or gen.is_async or any(
                isinstance(n, _NOT_IN_LAMBDA) for n in gast.walk(node)):
            self._iterated(node)
            return self.generic_visit(node)
        node = self.generic_visit(node)
        item = self.ctx.namer.new("item")
        one = gast.ListComp(elt=gast.Tuple(elts=[node.key, node.value], ctx=gast.Load()),
                            generators=[gast.comprehension(
                                target=gen.target, iter=gast.Tuple(
                                    elts=[templates.name(item)], ctx=gast.Load()),
                                ifs=[], is_async=0)])
        fn = templates.replace_as_expression("lambda item: one[0]", item=item, one=one)
        fn.args.args[0].ctx = gast.Param()
        return templates.replace_as_expression(f"{RESERVED}.dict_comp(xs, fn)",
                                               xs=gen.iter, fn=fn)

    def _iterated(self, node) -> None:
        first = node.generators[0]
        first.iter = self._items(first.iter, "a comprehension", True)

    def visit_List(self, node):
        node = self.generic_visit(node)
        self._unpacked(node.elts)
        return node

    visit_Tuple = visit_List

    def _unpacked(self, items: list) -> None:
        """`[*seen]`, `f(*seen)` of what may be a set: `*_d2s.set_items(seen)`, an item per
        item of the set (refused where it holds computed values: `operators.set_algebra`)."""
        for item in items:
            if item.__class__ is gast.Starred and item.ctx.__class__ is gast.Load:
                item.value = self._items(item.value, "`*` unpacking", True)

    def _items(self, node, what: str, always: bool = False):
        """`node`, or `_d2s.set_items(node, what)` where it may be a set (`set_operands`), or
        `always` (a dict whose keys the run decides: `key_flags`; not a display or a tensor's
        `shape`, which cannot be one)."""
        if not (set_like(node, self._set_names()) or always and not _plain_items(node)):
            return node
        return templates.replace_as_expression(f"{RESERVED}.set_items(s, what)", s=node,
                                               what=gast.Constant(what, None))

    def _set_function(self, node):
        """`set.union` passed to a function (`functools.reduce(set.union, sets)`): as it
        takes a set converted code made (`operators.made_sets`)."""
        if not (node.__class__ is gast.Attribute and node.value.__class__ is gast.Name and
                node.value.id in ("set", "frozenset") and not self._shadowed(node.value.id)):
            return node
        return templates.replace_as_expression(f"{RESERVED}.unbound_set_method(f)", f=node)

    def _set_names(self) -> frozenset:
        """The names the converted function may bind to a set (`set_operands`)."""
        return WithGlobals(set_names(self.scopes[0]) if self.scopes else frozenset(),
                           self.ctx.namespace)

    def visit_Attribute(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load):
            return node
        if node.attr in TENSOR_ATTRIBUTES and not _of_self(node):  # (a traced tensor's
            # own are the program's)
            return templates.replace_as_expression(
                f"{RESERVED}.tensor_attribute(x, {node.attr!r})", x=node.value)
        if node.attr not in ("shape", "size"):
            return node
        return templates.replace_as_expression(f"{RESERVED}.{node.attr}(x)", x=node.value)

    def _module_function(self, f, module, names) -> bool:
        """Whether `f` is `module.<name>` (`math.sqrt`, or `sqrt` imported from math) here,
        for a name in `names`."""
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            owner, attr = f.value.id, f.attr
            return attr in names and not self.is_local(owner) and \
                self.ctx.namespace.get(owner) is module
        return isinstance(f, gast.Name) and f.id in names and not self.is_local(
            f.id) and self.ctx.namespace.get(f.id, _ABSENT) is getattr(module, f.id, None)

    def _builtin(self, f, name: str) -> bool:
        """Whether `f` is the built-in `name` here."""
        return isinstance(f, gast.Name) and f.id == name and not self._shadowed(name)

    def _shadowed(self, name: str) -> bool:
        if self.is_local(name):
            return True
        return self.ctx.namespace.get(name, getattr(builtins, name)) is not getattr(
            builtins, name)


_ABSENT = object()  # (a name the function's namespace does not bind)


def _written_number(node) -> bool:
    """Whether `node` is None or a number written in the code (`2`, `-1`)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return node is None or isinstance(node, gast.Constant)


def _of_self(node) -> bool:
    """`self.<attr>`: a method's object, never a tensor (left as written)."""
    return isinstance(node.value, gast.Name) and node.value.id == "self"


def _print_text(node):
    """A `print` argument that makes text (an f-string, `"...".format(...)`, `"..." % v`) as
    pieces `print_` can format when the program runs, where they hold computed numbers."""
    if isinstance(node, gast.JoinedStr):
        return _fstring(node)
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr == "format" and _is_str(node.func.value):
        return gast.Call(func=templates.parse_expr(f"{RESERVED}.format_text"),
                         args=[node.func.value, *node.args], keywords=node.keywords)
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mod) and _is_str(node.left):
        return gast.Call(func=templates.parse_expr(f"{RESERVED}.percent_text"),
                         args=[node.left, node.right], keywords=[])
    return node


def _is_str(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is str


def _fstring(node):
    """`f"a{x!r:>4}b"` as `_d2s.fstring("a", _d2s.formatted(x, "r", ">4"), "b")`: the pieces,
    so `print_` can format a tensor piece when the program runs."""
    pieces = []
    for v in node.values:
        if isinstance(v, gast.FormattedValue):
            conv = chr(v.conversion) if v.conversion not in (None, -1) else ""
            spec = v.format_spec if v.format_spec is not None else gast.Constant("", None)
            call = templates.replace_as_expression(
                f"{RESERVED}.formatted(value, conv, spec)", value=v.value,
                conv=gast.Constant(conv, None), spec=spec)
            pieces.append(call)
        else:
            pieces.append(v)
    return gast.Call(func=templates.parse_expr(f"{RESERVED}.fstring"), args=pieces,
                     keywords=[])


def transform(node, ctx):
    return BuiltinCalls(ctx).visit(node)


def _plain_items(node) -> bool:
    """Whether `node` is a list or tuple display, a `range(...)`, or an attribute that holds
    no dict in model code (`x.shape`): read an item per item, none is a dict or set."""
    cls = node.__class__
    return cls in (gast.List, gast.Tuple, gast.ListComp, gast.Constant) or (
        cls is gast.Attribute and node.attr == "shape") or (
        cls is gast.Call and node.func.__class__ is gast.Name and node.func.id == "range")
