"""Which operands of `&`, `^`, `-`, `<`, `<=`, `>`, `>=` may be Python sets: those the
converters hand to `_d2s.set_op` (`operators.set_algebra`), which refuses set algebra and set
comparisons of a set holding values the converted code computed (`int(t)`, a tuple of them),
whose Python result would compare the trace's objects, not eager's values.

    seen & {(0, 1), (1, 1)}   ->   _d2s.set_op(seen, '&', {(0, 1), (1, 1)})
    common = a - b            ->   _d2s.set_op(a, '-', b)   (`a = set(...)` in the function)
    seen -= other             ->   seen = _d2s.set_op(seen, '-=', other)

An operand may be a set when it is a set display or comprehension, a call of `set` /
`frozenset` / a set method that gives a set / `.keys()` / `.items()`, or a name the function
(or a function it holds) binds to one of these or annotates as a set. Anything else
(`x - mean`, `mask & valid`) stays Python's operator: tensor arithmetic is the common case,
and `plain_runs` keeps such statements folded. The same look finds the names the function
binds to a dict (`dict_names`): `index[0] = v` of one goes through `_d2s.set_item`, which
refuses a Python key beside a computed key it may equal.
"""
from __future__ import annotations

import gast

from ..pyct import anno
from ..pyct.naming import RESERVED
from ..pyct.walk import BLOCK_FIELDS

# operator node type -> its text in `_d2s.set_op` (`|` is never refused: a union of a set
# holding computed values holds them all, and `in` of it compares by value; `set_op` makes
# its result a made set, `FROZEN | seen`, as a made set's own `|` does: `made_sets`)
BINARY = {gast.BitAnd: "&", gast.BitXor: "^", gast.Sub: "-", gast.BitOr: "|"}
COMPARE = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">="}

_SET_CALLS = frozenset(("set", "frozenset", "set_", "frozenset_"))
_SET_METHODS = frozenset(("keys", "items", "union", "intersection", "difference",
                          "symmetric_difference", "copy", "set_", "frozenset_", "made_set"))
# (and `_d2s.set_(...)`, `_d2s.made_set({...})`: `builtin_calls` may have rewritten it already)
_SET_TYPES = frozenset(("set", "frozenset", "Set", "FrozenSet", "AbstractSet", "MutableSet"))
_NAMES = "set_names"  # anno key of a function: the names it may bind to a set
_DICT_NAMES = "dict_names"  # and those it binds to a dict
_LIST_NAMES = "list_names"  # ... and to a list
_SEQUENCE_NAMES = "sequence_names"  # and those it binds to a list or tuple display


def set_like(node, names: frozenset) -> bool:
    """Whether the expression `node` may be a Python set (see the module doc)."""
    cls = node.__class__
    if cls in (gast.Set, gast.SetComp):
        return True
    if cls is gast.Name:
        return node.id in names
    if cls is gast.Call:
        f = node.func
        if _routed(f):  # (`_d2s.call(d.keys)()`: `call_trees` ran first)
            f = f.args[0]
        if f.__class__ is gast.Name:
            return f.id in _SET_CALLS
        return f.__class__ is gast.Attribute and f.attr in _SET_METHODS
    if cls is gast.BinOp:
        return node.op.__class__ in BINARY and (
            set_like(node.left, names) or set_like(node.right, names))
    return False


def _routed(f) -> bool:
    """Whether `f` is `_d2s.call(g)` (`call_trees`' form of a call of `g`)."""
    return f.__class__ is gast.Call and f.func.__class__ is gast.Attribute and \
        f.func.attr == "call" and f.func.value.__class__ is gast.Name and \
        f.func.value.id == RESERVED and len(f.args) == 1


class WithGlobals(frozenset):
    """`names` (`set_names`), and any global or closure name that holds a set or frozenset
    when the function is converted (`FROZEN & seen`: a frozenset's `&` runs before a made
    set's `__rand__`, `operators.made_sets`)."""

    def __new__(cls, names: frozenset, namespace):
        out = super().__new__(cls, names)
        out.namespace = namespace
        return out

    def __contains__(self, name) -> bool:
        return frozenset.__contains__(self, name) or isinstance(
            self.namespace.get(name), (set, frozenset))


def set_operands(node, names: frozenset) -> bool:
    """Whether the BinOp or one-operator Compare `node` may be set algebra."""
    if node.__class__ is gast.BinOp:
        ops, operands = BINARY, (node.left, node.right)
        op = node.op
    else:
        ops, operands = COMPARE, (node.left, node.comparators[0])
        op = node.ops[0]
    return op.__class__ in ops and any(set_like(o, names) for o in operands)


def set_names(fn) -> frozenset:
    """The names that the function `fn` (or a function nested in it) binds to what may be a
    set, by an assignment statement, or annotates as one; computed once per function node
    (statements only: a walk of every expression of a big function costs too much)."""
    found = anno.getanno(fn, _NAMES, None)
    if found is not None:
        return found
    values, names, stack = [], set(), [fn]
    while stack:
        s = stack.pop()
        cls = s.__class__
        if cls is gast.Assign:
            values += ((t.id, s.value) for t in s.targets if t.__class__ is gast.Name)
        elif cls is gast.AnnAssign and s.target.__class__ is gast.Name:
            if _annotated_set(s.annotation):
                names.add(s.target.id)
            elif s.value is not None:
                values.append((s.target.id, s.value))
        elif cls in (gast.FunctionDef, gast.AsyncFunctionDef):
            names.update(a.id for a in s.args.args + s.args.kwonlyargs
                         if _annotated_set(a.annotation))
        for field in BLOCK_FIELDS:
            block = getattr(s, field, None)
            if block and block.__class__ is list:
                stack.extend(block)
    size = -1
    while size != len(names):  # (`b = a` after `a = set()`: until nothing is added)
        size = len(names)
        names.update(t for t, v in values if set_like(v, frozenset(names)))
    found = frozenset(names)
    anno.setanno(fn, _NAMES, found)
    anno.setanno(fn, _DICT_NAMES, frozenset(t for t, v in values if _dict_like(v)))
    anno.setanno(fn, _LIST_NAMES, frozenset(t for t, v in values if v.__class__ in (
        gast.List, gast.ListComp) or v.__class__ is gast.Call and v.func.__class__ is
        gast.Name and v.func.id in ("list", "list_")))
    anno.setanno(fn, _SEQUENCE_NAMES, frozenset(t for t, v in values if sequence_like(v)))
    return found


def sequence_names(fn) -> frozenset:
    """The names that the function `fn` binds to what `sequence_like` finds (`key = (a, b)`:
    `key < best` goes through `_d2s.seq_order`, which is Python's `<` for anything else)."""
    set_names(fn)
    return anno.getanno(fn, _SEQUENCE_NAMES)


_SEQUENCE_CALLS = frozenset(("tuple", "list", "sorted", "tuple_", "list_", "sorted_"))


def sequence_like(node, names: frozenset = frozenset()) -> bool:
    """Whether `node` is written as a list or tuple: a display, a list comprehension, a call
    of `tuple` / `list` / `sorted` (or `builtin_calls`' forms of them), `.tolist()`, or one
    of `names`: an ordering comparison with it goes through `_d2s.seq_order`
    (`operators.sequence_order`)."""
    cls = node.__class__
    if cls in (gast.Tuple, gast.List, gast.ListComp):
        return True
    if cls is gast.Name:
        return node.id in names
    f = node.func if cls is gast.Call else None
    if f.__class__ is gast.Name:
        return f.id in _SEQUENCE_CALLS
    return f.__class__ is gast.Attribute and (f.attr == "tolist" or f.attr in _SEQUENCE_CALLS
                                              and f.value.__class__ is gast.Name and
                                              f.value.id == RESERVED)


def dict_names(fn) -> frozenset:
    """The names that the function `fn` binds to a dict display, comprehension or `dict()`
    (`builtin_calls`: `index[0] = v` of one stores as a computed key would see it)."""
    set_names(fn)
    return anno.getanno(fn, _DICT_NAMES)


def list_names(fn) -> frozenset:
    """The names that the function `fn` binds to a list display, comprehension or `list()`
    (`names += d` of one reads the keys of a dict: `builtin_calls`)."""
    set_names(fn)
    return anno.getanno(fn, _LIST_NAMES)


def added_dict(node, fn) -> bool:
    """Whether the statement `node` is `t += v` of names where `t` may be a list and `v` a
    dict (`names += d`: the keys of every path of a dict whose keys the run decides)."""
    return node.op.__class__ is gast.Add and node.target.__class__ is gast.Name and \
        node.value.__class__ is gast.Name and (
            node.value.id in dict_names(fn) or node.target.id in list_names(fn))


def _dict_like(node) -> bool:
    cls = node.__class__
    if cls in (gast.Dict, gast.DictComp):
        return True
    f = getattr(node, "func", None) if cls is gast.Call else None
    return f.__class__ is gast.Name and f.id == "dict" or (
        f.__class__ is gast.Attribute and f.attr == "dict_display")


def _annotated_set(a) -> bool:
    if a is None:
        return False
    if a.__class__ is gast.Subscript:
        a = a.value
    if a.__class__ is gast.Attribute:
        return a.attr in _SET_TYPES
    return a.__class__ is gast.Name and a.id in _SET_TYPES
