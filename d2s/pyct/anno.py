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

# The attribute of a parsed node holding its file's locator (`origin.locator`): its ORIGIN is
# made from its position when first read (`lazy_origin`). A parsed function has an origin on
# every node with a position, and most are never read: an annotation dict and an OriginInfo
# each were a third of the tree's memory and a good part of parsing time.
LAZY_ORIGIN = "_d2s_at"

_MISSING = object()


def getanno(node, key: str, default=_MISSING):
    store = getattr(node, _KEY, None)
    if store is not None and key in store:
        return store[key]
    if key == ORIGIN:
        found = lazy_origin(node)
        if found is not None:
            return found
    if default is _MISSING:
        raise KeyError(f"node {type(node).__name__} has no annotation {key!r}")
    return default


def hasanno(node, key: str) -> bool:
    store = getattr(node, _KEY, None)
    if store is not None and key in store:
        return True
    return key == ORIGIN and getattr(node, LAZY_ORIGIN, None) is not None


def lazy_origin(node):
    """The ORIGIN of a parsed node that was not read before (None for any other node): made
    from its position by its locator, and kept as its annotation from now on."""
    at = getattr(node, LAZY_ORIGIN, None)
    if at is None:
        return None
    found = at(node.lineno, getattr(node, "col_offset", 0))
    setanno(node, ORIGIN, found)
    return found


def setanno(node, key: str, value) -> None:
    store = getattr(node, _KEY, None)
    if store is None:
        store = {}
        setattr(node, _KEY, store)
    store[key] = value


def delanno(node, key: str) -> None:
    store = getattr(node, _KEY, None)
    if store is not None:
        store.pop(key, None)
    if key == ORIGIN and getattr(node, LAZY_ORIGIN, None) is not None:
        delattr(node, LAZY_ORIGIN)


def copyanno(src, dst, key: str) -> None:
    if hasanno(src, key):
        setanno(dst, key, getanno(src, key))
