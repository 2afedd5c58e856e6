"""Annotations on AST nodes: a small dict stored under one private attribute.

Converters and analyses communicate through these (e.g. `LIVE_OUT` on a statement) instead of
adding ad-hoc attributes, so a reader can find every kind of annotation here.

>>> import gast
>>> n = gast.parse("x = 1").body[0]
>>> setanno(n, ORIGIN, "f.py:1"); getanno(n, ORIGIN)
'f.py:1'
"""
from __future__ import annotations

KEY = _KEY = "_d2s_anno"  # the attribute (read directly on hot paths)

# Keys used across the package (a docstring each, so a reader knows what they hold).
ORIGIN = "origin"            # OriginInfo of the user code a node came from
LIVE_OUT = "live_out"        # frozenset of names live after a statement
DEFINED_IN = "defined_in"    # frozenset of names possibly bound before a statement
LOOP_LIVE = "loop_live"      # frozenset of names live at a loop's header (each iteration start)
EXTRA_TEST = "extra_test"    # gast expr: a `for` loop runs another iteration only if it holds
SCOPE_DECL = "scope_decl"    # dict name -> 'global' | 'nonlocal' declared in a function
LOCALS = "locals"            # frozenset of a function's local names (activity.local_names)
LOOP_GUARD = "loop_guard"    # `if flag: break` opening a `for` body; the loop converter drops it
RETURN_VALUE = "return_value"  # on a function def: the name its return converter returns
GENERATED = "generated"      # True on function defs made by converters (not user functions)
OPAQUE = "opaque"            # a nested function no pass may change (a generator)
SOURCE_TEXT = "source_text"  # a statement no pass changed: its text in the user's file, printed
                             # as it is (converters/plain_runs.py, pyct/source_printer.py)

# ORIGIN is kept apart from the other annotations, in attributes of its own: every node has
# one, and an annotation dict per node was a third of a converted tree's memory. A node made
# by a converter holds it in `ORIGIN_ATTR`; a parsed node holds its file's locator
# (`origin.locator`) in `LAZY_ORIGIN`, and its origin is made from its position when first
# read (`origin_of`): most are never read.
ORIGIN_ATTR = "_d2s_origin"
LAZY_ORIGIN = "_d2s_at"

_MISSING = object()


def getanno(node, key: str, default=_MISSING):
    if key == ORIGIN:
        found = origin_of(node)
        if found is not None:
            return found
    else:
        store = getattr(node, _KEY, None)
        if store is not None and key in store:
            return store[key]
    if default is _MISSING:
        raise KeyError(f"node {type(node).__name__} has no annotation {key!r}")
    return default


def hasanno(node, key: str) -> bool:
    if key == ORIGIN:
        return getattr(node, ORIGIN_ATTR, None) is not None or \
            getattr(node, LAZY_ORIGIN, None) is not None
    store = getattr(node, _KEY, None)
    return store is not None and key in store


def origin_of(node):
    """`getanno(node, ORIGIN, None)`: a parsed node's is made from its position on first
    read, and kept."""
    found = getattr(node, ORIGIN_ATTR, None)
    if found is None:
        at = getattr(node, LAZY_ORIGIN, None)
        if at is not None:
            found = at(node.lineno, getattr(node, "col_offset", 0))
            setattr(node, ORIGIN_ATTR, found)
    return found


def setanno(node, key: str, value) -> None:
    if key == ORIGIN:
        setattr(node, ORIGIN_ATTR, value)
        return
    store = getattr(node, _KEY, None)
    if store is None:
        store = {}
        setattr(node, _KEY, store)
    store[key] = value


def delanno(node, key: str) -> None:
    if key == ORIGIN:
        for attr in (ORIGIN_ATTR, LAZY_ORIGIN):
            if getattr(node, attr, None) is not None:
                delattr(node, attr)
        return
    store = getattr(node, _KEY, None)
    if store is not None:
        store.pop(key, None)


def copyanno(src, dst, key: str) -> None:
    if hasanno(src, key):
        setanno(dst, key, getanno(src, key))
