"""Set algebra of a set whose items a tensor `if` decides (`branch_sets`: each item it holds
on some paths only has a presence flag): `s - t`, `s & t`, `s ^ t`, `s | t` and their
method forms (`s.difference(t)`, ...) give a new set holding each item that may be in the
result, with the item's presence in it computed from its presence in the operands (`a and
not b` for `-`): a flag where it depends on the run. `len()`, `in`, `bool()` and further
algebra of the result follow the run, as they do of the set itself; the other reads of it
are refused as that set's are (`traced_keys.check_decided`). Operands holding values the
converted code computed, or a set an `if` left undecided without flags (a graph loop's),
keep the refusal.

    seen = {(0, 0)}; if x.sum() > 0: seen.add((0, 1))     # (0, 1): flag f
    len(seen - {(0, 0)})  ->  a made set {(0, 1)} with flag f: len() is int(f)
"""
from __future__ import annotations

import builtins

import runtime as rt

from .branch_sets import set_flags
from .trace_state import current
from .traced_keys import traced

_SYMBOLS = {"difference": "-", "intersection": "&", "symmetric_difference": "^", "union": "|"}


def flagged_algebra(op: str, a, b, made):
    """`a <op> b` (`op` one of `-`, `&`, `^`, `|`, or a method name of `_SYMBOLS`) where `a` or
    `b` is a set whose items a tensor `if` decides: a made set (`made`) whose flags follow
    the run; None where neither is, or an operand cannot be read so (see the module doc)."""
    op = _SYMBOLS.get(op, op)
    fa, fb = set_flags(a), set_flags(b)
    if not (fa or fb) or op not in "-&^|":
        return None
    ra, rb = _items(a), _items(b)
    state = current()
    for x, flags, raw in ((a, fa, ra), (b, fb, rb)):
        if raw is None or not flags and id(x) in state.undecided or any(map(traced, raw)):
            return None
    source = state.undecided[id(a) if fa else id(b)]
    kind = builtins.frozenset if isinstance(ra, builtins.frozenset) else builtins.set
    held, flags = [], {}
    for item in list(ra) + [x for x in rb if x not in ra]:
        p = _combine(op, _presence(item, ra, fa), _presence(item, rb, fb))
        if p is False:
            continue
        held.append(item)
        if p is not True:
            flags[item] = p
    out = made(kind(held))
    if flags:
        state.undecided[id(out)] = (out, f"made from {source[1]}", source[2])
        state.set_flags[id(out)] = (out, [flags])
    return out


def _items(x):
    """The items of a set, frozenset, made set (`_s`); None for another operand."""
    raw = getattr(x, "_s", x)
    return raw if isinstance(raw, (builtins.set, builtins.frozenset)) else None


def _presence(item, raw, flags):
    """True / False, or the bool graph value telling where `raw` holds `item`."""
    if item not in raw:
        return False
    return flags.get(item, True)


def _not(p):
    return (not p) if type(p) is bool else rt.logical_not(p)


def _combine(op: str, p, q):
    if op == "-":
        op, q = "&", _not(q)
    if op == "&":
        if p is False or q is False:
            return False
        return q if p is True else p if q is True else rt.logical_and(p, q)
    if op == "|":
        if p is True or q is True:
            return True
        return q if p is False else p if q is False else rt.logical_or(p, q)
    if type(p) is bool and type(q) is bool:  # (`^`)
        return p != q
    if type(p) is bool:
        return _not(q) if p else q
    if type(q) is bool:
        return _not(p) if q else p
    return rt.logical_xor(p, q)


_COMPARISONS = {"isdisjoint": "isdisjoint", "issubset": "<=", "issuperset": ">=", "<=": "<=",
                ">=": ">=", "<": "<", ">": ">", "==": "==", "!=": "!="}


def flagged_compare(op: str, a, b):
    """`a <op> b` (`<=`, `<`, `>=`, `>`, `==`, `!=`, or `isdisjoint` / `issubset` /
    `issuperset`) where `a` or `b` is a set whose items a tensor `if` decides: a Python bool,
    or a bool graph value standing for one, from the items' presence; None where neither is
    such a set, or an operand cannot be read so (as `flagged_algebra`)."""
    op = _COMPARISONS.get(op)
    pairs = _presences(a, b) if op is not None else None
    if pairs is None:
        return None
    if op in (">=", ">"):
        op, pairs = op.replace(">", "<"), [(q, p) for p, q in pairs]
    if op == "isdisjoint":
        out = _not(_any([_combine("&", p, q) for p, q in pairs]))
    else:
        subset = _all([_combine("|", _not(p), q) for p, q in pairs])
        same = _all([_not(_combine("^", p, q)) for p, q in pairs])
        out = subset if op == "<=" else same if op == "==" else _not(same) if op == "!=" \
            else _combine("&", subset, _not(same))
    if type(out) is bool:
        return out
    out = rt.assign(out)
    out.python_scalar = True  # (a comparison of sets gives a Python bool)
    return out


def _presences(a, b):
    """[(presence in `a`, presence in `b`)] per item of either; None as `flagged_algebra`."""
    fa, fb = set_flags(a), set_flags(b)
    if not (fa or fb):
        return None
    ra, rb = _items(a), _items(b)
    undecided = current().undecided
    for x, flags, raw in ((a, fa, ra), (b, fb, rb)):
        if raw is None or not flags and id(x) in undecided or any(map(traced, raw)):
            return None
    return [(_presence(item, ra, fa), _presence(item, rb, fb))
            for item in list(ra) + [x for x in rb if x not in ra]]


def _any(values: list):
    out = False
    for v in values:
        out = _combine("|", out, v)
    return out


def _all(values: list):
    out = True
    for v in values:
        out = _combine("&", out, v)
    return out
