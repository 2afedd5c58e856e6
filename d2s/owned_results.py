"""Returned objects that are the caller's own: the same objects after each call, as eagerly.

`def f(x, metrics): metrics["a"] = x.sum(); return metrics` returns the caller's dict in eager
code (`r is metrics`); a program's result is rebuilt from its `pytree` structure on every call,
so it would be a new dict (and, traced with the caller's objects restored to what they held
before the call, one without the keys the call set). The caller's lists, dicts and dataclass
objects found in the traced result (an argument, a container nested in one, one the instance,
a closure or a global holds; a list or dict argument the trace got as a copy: its original)
are `Owned` places of the result: after each call the result holds those objects themselves,
which the write-back and the replayed effects (`writeback.py`, `side_effects.py`) leave
holding the run's values. A program shared by calls passing other objects of one structure
(`rebinding.py`) names each call's own objects in its `owned` too.
"""
from __future__ import annotations

from runtime import pytree


class Owned:
    """The caller's object `obj` at `path` (child indices in the result's `pytree` tree)."""

    __slots__ = ("obj", "path")

    def __init__(self, path: tuple, obj):
        self.path, self.obj = path, obj


def find(value, tree, log, copies) -> tuple:
    """The `Owned` places of a traced result `value` (flattened into `tree`): its containers
    that the mutation log of the call (`log`: what was reachable when the call started)
    holds, or that are the trace's copies of the caller's (`writeback.Copy`)."""
    if tree is pytree.LEAF or log is None:
        return ()
    copied = {id(c.copy): c.original for c in copies}
    seen = log.seen
    found: list = []

    def walk(x, t, path, depth):
        if t is pytree.LEAF or depth > 16:
            return
        obj = copied.get(id(x))  # (a copy the trace got: the caller's original)
        if obj is None:
            entry = seen.get(id(x))
            obj = x if entry is not None and entry[0] is x and not isinstance(x, tuple) \
                else None
        if obj is not None:
            found.append(Owned(path, obj))
            return
        items, _ = pytree.children(x)
        for i, (item, sub) in enumerate(zip(items, t[1])):
            walk(item, sub, path + (i,), depth + 1)

    walk(value, tree, (), 0)
    return tuple(found)


def unflatten(tree, leaves, owned: tuple):
    """`pytree.unflatten(tree, leaves)`, the caller's own object at each `Owned` path."""
    if not owned:
        return pytree.unflatten(tree, leaves)
    at = {o.path: o.obj for o in owned}
    return _build(tree, iter(leaves), at, ())


def _build(tree, it, at: dict, path: tuple):
    if path in at:
        _skip(tree, it)
        return at[path]
    if tree is pytree.LEAF:
        return next(it)
    how, subtrees = tree
    return pytree.rebuild(how, [_build(t, it, at, path + (i,)) for i, t in enumerate(subtrees)])


def _skip(tree, it) -> None:
    if tree is pytree.LEAF:
        next(it)
        return
    for t in tree[1]:
        _skip(t, it)
