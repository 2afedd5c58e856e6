"""Set algebra, set comparisons and the set methods that compare items, of a Python set (or
dict) holding a value the converted code computed (`seen.add((int(x[0] > 0), 1))`).

While tracing, such a value is a graph value that hashes and compares by identity, so
Python's `seen & {(0, 1), (1, 1)}` would keep only the items that are the same objects: its
`len()` one lower than eager's wherever the run's value equals a literal item, silently.
Which items are equal is known only when the program runs, and the result of such an
operation is a set of Python values, which a program cannot return. So each is refused at the
user's line, naming what to write instead (`in`, which converted code evaluates by value:
`in_`); on sets of Python values they are Python's own.

    seen & {(0, 1)}          ->   _d2s.set_op(seen, '&', {(0, 1)})    (`converters.set_operands`)
    seen.intersection(t)     ->   _d2s.call(seen.intersection)(t)     (`calls`: `set_method`)
    [*seen]                  ->   [*_d2s.set_items(seen, '`*` unpacking')]

A union (`|`, `.union`, `.update`, `.add`) keeps every item, so `in` of it stays right
(`len()` of it and loops over it are refused: `traced_keys.check_unique`).
"""
from __future__ import annotations

import operator

from . import key_flags
from .traced_keys import check_decided, check_unique, set_flags, traced

_VIEWS = (type({}.keys()), type({}.items()))

_OPS = {"&": operator.and_, "^": operator.xor, "-": operator.sub, "|": operator.or_,
        "&=": operator.iand, "^=": operator.ixor, "-=": operator.isub, "|=": operator.ior,
        "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

_INSTEAD = {
    "&": "for `s & t`, count the common items with `sum(p in s for p in t)` (`t` of Python "
         "values), or test each with `in`",
    "-": "for `s - t`, test the items with `in` (`[p for p in u if p not in t]` over a set "
         "`u` of Python values)",
    "<=": "for `s <= t`, test the items with `in` (`all(p in t for p in u)` over a set `u` of "
          "Python values)",
    "isdisjoint": "for `s.isdisjoint(t)`, test the items with `in` (`not any(p in s for p "
                  "in t)`, `t` of Python values)",
    "discard": "keep what the set tracks in a tensor (a bool mask), or build the set without "
               "the item",
}
# (the operators and methods of one meaning share their advice)
_SAME = {"&=": "&", "intersection": "&", "intersection_update": "&", "-=": "-",
         "difference": "-", "difference_update": "-", "^": "-", "^=": "-",
         "symmetric_difference": "-", "symmetric_difference_update": "-",
         "<": "<=", ">": "<=", ">=": "<=", "==": "<=", "!=": "<=", "issubset": "<=",
         "issuperset": "<=", "remove": "discard", "pop": "discard"}

# methods of a set whose result depends on which items are equal
READING_METHODS = frozenset(("intersection", "intersection_update", "difference",
                             "difference_update", "symmetric_difference",
                             "symmetric_difference_update", "issubset", "issuperset",
                             "isdisjoint", "discard", "remove", "pop"))


def set_op(a, op: str, b, items=None):
    """`a <op> b` (`&`, `^`, `-`, `|`, their in-place forms, `<`, `<=`, `>`, `>=`), refused where
    a set or dict on either side holds a value the converted code computed (`|`, `|=`: never,
    a union keeps every item); `items`: the set `b` holds its items in, where it is another."""
    for x in (a, b):  # (a dict's keys or items view: its keys on every path)
        if isinstance(x, _VIEWS):
            key_flags.refuse_iteration(x, f"`{op}`")
    if op in ("&=", "-=") and set_flags(a):  # (of a set a tensor `if` decides: items gone
        check_items(f"`{op}`", op, b)  # on every path; the others keep their flags)
    elif op not in ("&=", "-=", "|=", "^=") and (set_flags(a) or set_flags(b)):
        pass  # (a made set's operator: its items' flags, `flagged_algebra`, or refused)
    elif op[0] != "|":
        check_items(f"`{op}`", op, a, b)
    else:  # (a union keeps every item: of a set a tensor `if` decides, the run's)
        check_decided(a, f"`{op}`")
        check_decided(b, f"`{op}`")
    return _OPS[op](a, b if items is None else items)


def set_items(s, what: str):
    """`s` read an item per item (`what`): unpacked by `*` (`[*seen]`, `f(*seen)`), by an
    assignment (`a, b = seen`), by `iter`, `map` or `filter`; refused where `s` holds a
    computed value (equal values would be two items)."""
    if isinstance(s, (dict,) + _ALL_VIEWS):  # (keys on some paths only: which the run decides)
        key_flags.refuse_iteration(s, what)
    check_unique(s, what)
    return s


_ALL_VIEWS = _VIEWS + (type({}.values()),)


def check_items(what: str, op: str, *operands) -> None:
    """A ConversionError at the user's line where one of `operands` is a set, frozenset or
    dict holding (as an item or key) a value the converted code computed."""
    for x in operands:
        check_unique(x, what, instead=_INSTEAD[_SAME.get(op, op)])


def set_method(method):
    """`s.intersection` & co. (`READING_METHODS`) as converted code calls them: refused
    where the set, or a set passed to it, holds a computed value, or the item that `remove` /
    `discard` looks for is one; else the method itself."""
    name = method.__name__

    def reading(*args, **kwargs):
        if isinstance(method.__self__, _VIEWS):  # (`d.keys().isdisjoint(t)`: its keys)
            key_flags.refuse_iteration(method.__self__, f"`.{name}()`")
        check_method(name, method.__self__, args)
        return method(*args, **kwargs)

    return reading


def check_method(name: str, s, args: tuple) -> None:
    """Refuse `s.<name>(*args)` (`READING_METHODS`) as `set_method` does."""
    check_items(f"`.{name}()`", name, s, *args)
    if name in ("discard", "remove") and args and traced(args[0]):
        check_unique({args[0]}, f"`.{name}()` of an item", instead=_INSTEAD["discard"])
