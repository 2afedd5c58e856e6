"""`sorted(lst, key=...)`, `lst.sort(key=...)`, and `sorted` / `sort` / `count` / `index` of a
list of tuples, where the program grows the list (a tensor array, or a `StructArray`: one
tensor array per part of the tuples).

The order is decided when the program runs: the sort keys are compared as eager code compares
them, a tuple part by part (`(a0, b0) < (a1, b1)`), so the order is a stable sort by the last
part, then by the one before, ..., then by the first; `reverse=True` sorts each by the negated
values (ties keep their order, as Python's reverse sort keeps them). A `key` is called once per
item in a graph loop, and may give a number or a tuple of numbers.
Every part compared is a Python number or a one-element tensor (`array_queries._items`).

    sorted(pairs)                     ->  order = argsort(b)[argsort(a[argsort(b)])] ...,
                                          each part's array reordered by it
    sorted(hyps, key=lambda h: h[1])  ->  keys = [h[1] for h in hyps] (a graph loop), then so
    pairs.count((a, b))               ->  sum(pack(firsts) == a and pack(seconds) == b)

A sort inside the loop that grows the list is the same ops inside that loop's body.
"""
from __future__ import annotations

import sys

import runtime as rt
from runtime.ops.arrays import array_pack
from runtime.pytree import flatten

from ..errors import ConversionError
from . import str_arrays
from .array_queries import _array_of_rows, _equal, _items, array_query, count_of, index_of
from .lists import StructArray, list_append
from .loops import for_loop
from .variables import user_origin, where


def query(items, method: str):
    """`items.<method>` (`count`, `index`, `sort`) of a list the program grows."""
    if not isinstance(items, StructArray):
        if method != "sort":
            return array_query(items, method)
        src = user_origin()

        def sort_array(*, key=None, reverse=False):
            items._inplace_update(sorted_keyed(items, key, reverse, src))
        return sort_array
    src = user_origin()
    if method == "count":
        return lambda value: count_of(_equal_items(items, value, src, method))
    if method == "index":
        return lambda value, start=0, stop=sys.maxsize: index_of(
            _equal_items(items, value, src, method), items.length(), value, start, stop, src)

    def sort(*, key=None, reverse=False):
        new = sorted_keyed(items, key, reverse, src)
        for old, part in zip(tuple.__iter__(items), tuple.__iter__(new)):
            old._inplace_update(part)
    return sort


def sorted_keyed(items, key=None, reverse=False, src=None):
    """`sorted(items, key=key, reverse=reverse)` of a tensor array or a StructArray: a new
    one of the same kind."""
    src = src or user_origin()
    str_arrays.not_strs(items, "sorted() or sort()")
    order = _order(_key_parts(items, key, src), reverse)
    if isinstance(items, StructArray):
        return type(items)(_reordered(a, order) for a in tuple.__iter__(items))
    return _reordered(items, order)


def _key_parts(items, key, src) -> list:
    """The values compared, part by part: [n] tensors."""
    if key is not None:
        keys = for_loop(items, lambda item, out: list_append(out, key(item)), ([],),
                        ("keys",))  # (as `comp_arrays.comp_map` builds `[key(v) for v in items]`)
        if isinstance(keys, list):  # (a key of Python values only, and no item appended)
            raise ConversionError(
                f"sorted() by a key that gives no tensor ({where(src)}) of a list whose length "
                "depends on a tensor: give a key that reads the item.", origin=src)
        return _parts(keys, "the keys of sorted", src)
    return _parts(items, "sorted", src)


def _parts(array, method, src) -> list:
    if not isinstance(array, StructArray):
        return [_items(array, method, src)]
    if _has_dicts(array.tree):
        raise ConversionError(
            f"{method}() of a list of dicts whose length depends on a tensor ({where(src)}): "
            "eager code cannot order dicts ('<' is not supported between them). Sort by a "
            "key (`key=lambda d: d['score']`).", origin=src)
    return [_items(a, method, src) for a in tuple.__iter__(array)]


def _has_dicts(tree) -> bool:
    return tree is not None and (tree[0][0] is dict or any(_has_dicts(t) for t in tree[1]))


def _order(parts: list, reverse: bool):
    """The positions of the items in sorted order: stable sorts from the last part to the
    first."""
    order = rt.arange(0, rt.shape(parts[0])[0], 1, "int64")
    for values in reversed(parts):
        keys = rt.cast(values, "float64") if values.dtype.name == "bool" else values
        keys = rt.gather(keys, order)
        order = rt.gather(order, rt.argsort(-keys if reverse else keys))
    return order


def _reordered(array, order):
    return _array_of_rows(rt.gather(array_pack(array), order), array)


def _equal_items(items, value, src, method):
    """Whether each tuple of `items` equals `value` (a bool [n]): part by part, as Python's
    `==` of tuples; a value of another structure equals none."""
    leaves, tree = flatten(value)
    if tree != items.tree:
        return rt.arange(0, items.length(), 1, "int64") < 0
    equal = None
    for part, v in zip(tuple.__iter__(items), leaves):
        e = _equal(part, v, src, method)
        equal = e if equal is None else rt.logical_and(equal, e)
    return equal
