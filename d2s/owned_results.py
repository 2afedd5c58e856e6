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

A container the call made that the result holds more than once (`return self.hist` after
`self.hist = self.hist + [y]`: the result and the state written back, `WithState`; `return
out, out`) is one object after each call too (`Shared`: built once, at its first place).
"""
from __future__ import annotations

from runtime import pytree


class Owned:
    """The caller's object `obj` at `path` (child indices in the result's `pytree` tree)."""

    __slots__ = ("obj", "path")

    def __init__(self, path: tuple, obj):
        self.path, self.obj = path, obj


class Shared:
    """A container at `path` that is the one at `first` (an earlier place of the result's
    `pytree` tree, in its walk order): the same object, as the trace had it."""

    __slots__ = ("first", "path")

    def __init__(self, path: tuple, first: tuple):
        self.path, self.first = path, first


class Replayed:
    """A list or dict at `path` that the call also stores where the caller can reach it,
    made anew after each call by `side_effects.Effects.replay` from `obj` (the trace's):
    the result's object is the one stored."""

    __slots__ = ("obj", "path")

    def __init__(self, path: tuple, obj):
        self.path, self.obj = path, obj


def find(value, tree, log, copies, anew=None) -> tuple:
    """The `Owned` places of a traced result `value` (flattened into `tree`): its containers
    that the mutation log of the call (`log`: what was reachable when the call started)
    holds, or that are the trace's copies of the caller's (`writeback.Copy`); then its
    `Shared` and `Replayed` places (`anew`: `Effects.made_anew()`)."""
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
    return tuple(found) + _shared(value, tree, {o.path for o in found}, anew or {})


def _shared(value, tree, owned: set, anew: dict) -> tuple:
    """`Shared` places of `value`: the containers met again in its walk (not inside the
    caller's objects, `owned`, which are not rebuilt); `Replayed` ones: those in `anew`."""
    first: dict = {}
    found: list = []

    def walk(x, t, path, depth):
        if t is pytree.LEAF or depth > 16 or path in owned:
            return
        if id(x) in first:
            found.append(Shared(path, first[id(x)][1]))
            return
        first[id(x)] = (x, path)  # (`x` kept: its id stays its own during the walk)
        if id(x) in anew:
            found.append(Replayed(path, x))
        items, _ = pytree.children(x)
        for i, (item, sub) in enumerate(zip(items, t[1])):
            walk(item, sub, path + (i,), depth + 1)

    walk(value, tree, (), 0)
    return tuple(found)


def unflatten(tree, leaves, owned: tuple, fresh: dict | None = None):
    """`pytree.unflatten(tree, leaves)`, the caller's own object at each `Owned` path, one
    object at the places of each `Shared` one; `fresh` gets id of the trace's -> the
    result's object at each `Replayed` path (what `Effects.replay` stores)."""
    if not owned:
        return pytree.unflatten(tree, leaves)
    at = {o.path: o.obj for o in owned if type(o) is Owned}
    again = {o.path: o.first for o in owned if type(o) is Shared}
    replayed = {o.path: o.obj for o in owned if type(o) is Replayed}
    built = dict.fromkeys([*again.values(), *replayed]) if again or replayed else None
    out = _build(tree, iter(leaves), at, (), again, built)
    if fresh is not None:
        fresh.update((id(obj), built[path]) for path, obj in replayed.items())
    return out


def _build(tree, it, at: dict, path: tuple, again: dict, built):
    if path in at:
        _skip(tree, it)
        return at[path]
    if again and path in again:
        _skip(tree, it)
        return built[again[path]]
    if tree is pytree.LEAF:
        return next(it)
    how, subtrees = tree
    out = pytree.rebuild(how, [_build(t, it, at, path + (i,), again, built)
                               for i, t in enumerate(subtrees)])
    if built is not None and path in built:
        built[path] = out
    return out


def _skip(tree, it) -> None:
    if tree is pytree.LEAF:
        next(it)
        return
    for t in tree[1]:
        _skip(t, it)
