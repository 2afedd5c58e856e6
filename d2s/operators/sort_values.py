"""`sorted(items, key=...)` and `items.sort(key=...)` of a Python list whose sort keys are
tensors computed by the converted code (a beam search keeping its best hypotheses:
`sorted(beams, key=lambda b: b[1], reverse=True)[:k]`), and `max` / `min` by such keys.

The list's length is fixed when the program is built; only the order is decided when it runs.
So the keys become one tensor, `argsort` (stable, as Python's sort) gives the order, and item
`p` of the result is, leaf by leaf, the stacked leaves of every item indexed by `order[p]`:

    sorted([(s0, 0), (s1, 1)], key=lambda h: h[0], reverse=True)
        ->  order = argsort(-stack([s0, s1]))
            [(stack([s0, s1])[order[0]], stack([0, 1])[order[0]]), (... order[1] ...)]

Leaves that are the same Python object in every item stay it; Python numbers that differ become
0-d graph values standing for Python numbers (as `int(t)` does), strs that differ a str the
run chooses (`branch_strs`: `max(scores, key=scores.get)`); tensor leaves keep their
gradient path through the gather. What one program cannot give is refused at the user's line:
items of other structures, or leaves of other dtypes or shapes (the dtype at a position would
depend on data), and keys that are not one number each (tuples of tensors, vectors).
"""
from __future__ import annotations

import builtins

import runtime as rt
from runtime.pytree import flatten, unflatten

from ..errors import ConversionError
from .str_arrays import ChosenStr, str_id
from .variables import is_variable, user_origin, where

_NUMBERS = (bool, int, float)


def sorted_items(items: list, key, reverse: bool) -> list:
    """`items` sorted as `sorted(items, key=key, reverse=reverse)` sorts them; each key is
    computed once."""
    keys = [item if key is None else key(item) for item in items]
    if not builtins.any(is_variable(k) or type(k) is tuple and builtins.any(
            is_variable(x) for x in k) for k in keys):
        order = builtins.sorted(builtins.range(len(items)), key=keys.__getitem__,
                                reverse=reverse)
        return [items[i] for i in order]
    src = user_origin()
    order = _order(keys, reverse, src)
    flat = [flatten(item) for item in items]
    tree = flat[0][1]
    if any(_shape(t) != _shape(tree) for _, t in flat):
        raise ConversionError(
            f"sorting a list of items of different structures by tensors ({where(src)}): the "
            "structure at each position would depend on data. Give every item the same "
            "structure.", origin=src)
    columns = [_column([leaves[j] for leaves, _ in flat], src)
               for j in builtins.range(len(flat[0][0]))]
    return [unflatten(tree, [c(order[p]) for c in columns]) for p in builtins.range(len(items))]


def extreme_by_key(py, args: tuple, kwargs: dict):
    """`max` / `min` (`py`) of `args` with `kwargs`; with a `key` over a list of items: the
    first item of the stable sort by the keys (Python's choice among ties), so keys that are
    graph values (a candidate picked by its score) decide it when the program runs; without
    one, over tuples holding graph values (`max(zip(scores, ids))`): by the tuples."""
    if builtins.len(args) == 1 and is_variable(args[0]):
        return py(*args, **kwargs)
    if "key" not in kwargs:
        if builtins.len(args) == 1 and not isinstance(args[0], (list, tuple)):
            args = (builtins.list(args[0]),)  # (an iterator: read once, here)
        items = args[0] if builtins.len(args) == 1 else args
        if not builtins.any(type(v) is tuple and builtins.any(is_variable(x) for x in v)
                            for v in items):
            return py(*args, **kwargs)
    unknown = builtins.set(kwargs) - {"key", "default"}
    if unknown:
        raise TypeError(f"{py.__name__}() got an unexpected keyword argument "
                        f"{builtins.min(unknown)!r}")
    items = builtins.list(args[0] if builtins.len(args) == 1 else args)
    if not items:
        if "default" in kwargs:
            return kwargs["default"]
        raise ValueError(f"{py.__name__}() iterable argument is empty")
    return sorted_items(items, kwargs.get("key"), reverse=py is builtins.max)[0]


def sort_in_place(items: list):
    """`items.sort`: sorts the list in place as `sorted_items` orders it."""

    def sort(*, key=None, reverse=False):
        items[:] = sorted_items(items, key, reverse)
    return sort


def _order(keys: list, reverse: bool, src):
    """The stable sorting order of `keys` (numbers or one-element graph values, or tuples of
    them of one length: compared item by item, as Python compares tuples), a tensor."""
    width = {len(k) for k in keys if type(k) is tuple}
    if width and builtins.all(type(k) is tuple for k in keys) and len(width) == 1:
        # (stable sorts by the last item first, then by each item before it: the order of
        # the tuples; equal keys keep their order, for reverse=True too)
        order = rt.arange(len(keys))
        for j in builtins.reversed(builtins.range(width.pop())):
            column = [k[j] for k in keys]
            if builtins.all(type(v) is str for v in column):  # (`(score, name)`: by rank)
                rank = {v: r for r, v in builtins.enumerate(builtins.sorted(builtins.set(column)))}
                column = [rank[v] for v in column]
            values = _key_values(column, src)
            picked = rt.gather(values, order)
            order = rt.gather(order, rt.argsort(-picked if reverse else picked))
        return order
    values = _key_values(keys, src)
    # a stable ascending sort of the negated keys is Python's reverse=True (ties keep order)
    return rt.argsort(-values if reverse else values)


def _key_values(keys: list, src=None):
    """The sort keys (numbers or one-element graph values) as one float64 tensor."""
    parts = []
    for k in keys:
        if not (isinstance(k, _NUMBERS) or is_variable(k) and k.size in (1, -1)
                and k.ndim <= 1):
            raise ConversionError(
                f"a sort key computed by the converted code that is not one number "
                f"({where(src)}): a key {_what(k)} orders items by the truth of tensor "
                "comparisons. Return one number per item from the key (a 0-d tensor), or "
                "sort a tensor with rt.argsort.", origin=src)
        parts.append(rt.reshape(rt.cast(k, "float64"), [])
                     if is_variable(k) else rt.to_tensor(float(k), "float64"))
    return rt.stack(parts)


def _column(leaves: list, src):
    """`pick(i)`: the leaf of the item at the run-time position `i`."""
    first = leaves[0]
    if builtins.all(v is first for v in leaves) or not builtins.any(
            is_variable(v) or rt.is_tensor(v) for v in leaves) and builtins.all(
            type(v) is type(first) and v == first for v in leaves):
        return lambda i: first
    if builtins.all(_number(v) for v in leaves):  # Python numbers, or values standing for them
        kinds = [_kind(v) for v in leaves]
        kind = "float64" if "f" in kinds else "bool" if set(kinds) == {"b"} else "int64"
        stacked = rt.stack([rt.reshape(rt.cast(v, kind), []) if is_variable(v) else
                            rt.to_tensor(v, kind) for v in leaves])

        def number(i):
            out = stacked[i]
            out.python_scalar = True
            return out
        return number
    if builtins.all(type(v) is str for v in leaves):  # (`max(scores, key=scores.get)`)
        ids = rt.stack([str_id(v) for v in leaves])
        return lambda i: SortedStr(ids[i])
    if not builtins.all(is_variable(v) or rt.is_tensor(v) for v in leaves) or len(
            {(str(v.dtype), tuple(v.shape)) for v in leaves}) != 1:
        raise ConversionError(
            f"sorting a list by tensors whose items hold values of other types, dtypes or "
            f"shapes at one place ({where(src)}: {', '.join(_what(v) for v in leaves[:4])}): "
            "the value at each position after sorting would depend on data. Give the items "
            "values of one dtype and shape there.", origin=src)
    stacked = rt.stack(leaves)
    return lambda i: stacked[i]


class SortedStr(ChosenStr):
    """A str that a sort by computed keys puts at a place (returned, the call gives it)."""

    __slots__ = ()
    what = "a str picked by sorted/max/min with keys computed by the converted code"


def _number(v) -> bool:
    """A Python number, or a 0-d graph value standing for one (`int(t)`, `t.item()`)."""
    if not is_variable(v):
        return isinstance(v, _NUMBERS)
    return getattr(v, "python_scalar", False) and v.size in (1, -1) and not v.is_array and \
        not getattr(v, "mixed_number", False) and v.none_when is None and v.number_when is None


def _kind(v) -> str:
    """"b", "i" or "f": the kind of Python number `v` is or stands for."""
    if is_variable(v):
        return "b" if v.dtype == "bool" else "f" if v.dtype.is_floating else "i"
    return "b" if isinstance(v, bool) else "f" if isinstance(v, float) else "i"


def _shape(tree):
    """A pytree's structure with each dataclass instance in it replaced by its class: trees
    compared without the instances' `__eq__` (which compares their fields, graph values)."""
    if tree is None:  # (a leaf)
        return None
    (kind, cls, extra), subtrees = tree
    return ((kind, type(cls) if kind == "dataclass" else cls, extra),
            tuple(_shape(t) for t in subtrees))


def _what(v) -> str:
    if is_variable(v) or rt.is_tensor(v):
        return f"a {v.dtype} tensor of shape {list(v.shape)}"
    return f"a {type(v).__name__}"
