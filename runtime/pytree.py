"""Nested Python structures as a flat list of leaves plus a description to rebuild them.

One rule everywhere: lists, tuples (namedtuples included), dicts and dataclass instances are
containers, rebuilt with their own type (a namedtuple by its fields, a dataclass as a copy
with its fields replaced, so frozen ones and fields outside `__init__` work); everything else,
`None` included, is a leaf.

    >>> import collections
    >>> P = collections.namedtuple("P", "a b")
    >>> leaves, tree = flatten({"x": [1, P(2, 3)], "y": None})
    >>> leaves
    [1, 2, 3, None]
    >>> unflatten(tree, [10, 20, 30, None])
    {'x': [10, P(a=20, b=30)], 'y': None}
"""
from __future__ import annotations

import copy
import dataclasses

LEAF = None  # the tree of a leaf


def is_container(x) -> bool:
    return isinstance(x, (list, tuple, dict)) or (
        dataclasses.is_dataclass(x) and not isinstance(x, type))


def children(x) -> tuple[list, object]:
    """(the children of container `x`, what rebuilding needs besides them)."""
    if isinstance(x, dict):
        return list(x.values()), (dict, type(x), tuple(x))
    if isinstance(x, (list, tuple)):
        return list(x), (list if isinstance(x, list) else tuple, type(x), None)
    names = tuple(f.name for f in dataclasses.fields(x))
    return [getattr(x, n) for n in names], ("dataclass", x, names)


def flatten(x) -> tuple[list, object]:
    """(leaves in order, tree)."""
    leaves: list = []
    return leaves, _flatten(x, leaves)


def _flatten(x, leaves):
    if not is_container(x):
        leaves.append(x)
        return LEAF
    items, how = children(x)
    return (how, tuple(_flatten(t, leaves) for t in items))


def unflatten(tree, leaves):
    """The structure `tree` (from `flatten`) with `leaves` (any iterable) in its leaves."""
    return _unflatten(tree, iter(leaves))


def _unflatten(tree, it):
    if tree is LEAF:
        return next(it)
    how, subtrees = tree
    items = [_unflatten(t, it) for t in subtrees]
    return rebuild(how, items)


def rebuild(how, items: list):
    kind, cls, extra = how
    if kind is dict:
        out = dict(zip(extra, items))
        return out if cls is dict else _as(cls, out)
    if kind is list:
        return items if cls is list else _as(cls, items)
    if kind is tuple:
        if cls is tuple:
            return tuple(items)
        return cls(*items) if hasattr(cls, "_fields") else cls(items)
    obj = copy.copy(cls)  # a dataclass instance: the original, its fields replaced
    for name, value in zip(extra, items):
        object.__setattr__(obj, name, value)
    return obj


def _as(cls, value):
    try:
        return cls(value)
    except TypeError:  # a subclass whose constructor wants other arguments
        return value


def structure(tree):
    """A hashable description of `tree`'s shape (types, dict keys, field names)."""
    if tree is LEAF:
        return None
    (kind, cls, extra), subtrees = tree
    if kind == "dataclass":
        cls, extra = type(cls), extra
    return (kind, cls, extra, tuple(structure(t) for t in subtrees))
