"""A dict key that one branch of a tensor `if` sets and the other leaves unset.

    d = {"a": x}
    if x.sum() > 0:
        d["b"] = x * 2      # eager code has d["b"] only where the condition held

The `if` is traced again with zeros under the key in the branch that leaves it unset, so
both branches give the dict one key set; after the `if` the key's value carries a presence
flag (`key_flags`): the condition, or its negation. Reading the value where the flag is
false raises eager's `KeyError: 'b'` when the program runs (a read check, `unbound.mark`);
`'b' in d`, `d.get('b', v)` and `len(d)` follow the flag. A later `if` whose branches leave
such a key holding values of different flags gives it the flag of the path taken.

Only a dict that a local name alone holds, in an `if` outside any other tensor `if` or
graph loop: a dict the caller can reach would keep the key after the call on every path,
and a flag inside a block cannot be read outside it; those stay refused
(`mutation_explain`).
"""
from __future__ import annotations

import runtime as rt
from runtime.core import active_builder

from . import key_flags
from .aliases import other_references
from .block_values import zeros_like
from .mutation import MISSING
from .unbound import mark
from .variables import is_variable


def find(log, names, outs, passed, found: dict) -> bool:
    """Keys of local dicts that one traced branch set to a tensor and the other left unset:
    new entries of `found` ((id(dict), key) -> (dict, key, a value like it, the index of the
    branch that leaves it unset)). True if any new."""
    if len(outs) != 2:
        return False
    # (a flag made in a block is read outside it only where a graph loop carries it out)
    if not (_outermost() or key_flags.grows_here()):
        return False
    n, new = len(names), False
    for j, slot in enumerate(log.slots):
        if slot.kind != "dict" or n + j >= min(len(outs[0]), len(outs[1])):
            continue
        a, b = outs[0][n + j], outs[1][n + j]
        ident = (id(slot.obj), slot.key)
        if (a is MISSING) == (b is MISSING) or ident in found:
            continue
        like = b if a is MISSING else a
        if not is_variable(like) or like.is_array or not _held_by_a_local(
                slot.obj, names, passed, log):
            continue
        found[ident] = (slot.obj, slot.key, like, 0 if a is MISSING else 1)
        new = True
    return new


def _outermost() -> bool:
    b = active_builder()
    return b is not None and b.block is b.program.global_block()


def _held_by_a_local(d, names, passed, log) -> bool:
    # (by index: a `zip` would hold a tuple of the dict, another reference to it)
    i = next((i for i in range(min(len(names), len(passed))) if passed[i] is d), None)
    return i is not None and not other_references(d, names[i], (log,))


def fill(found: dict, side: int) -> None:
    """In the traced branch `side` (0: if, 1: else): zeros under the keys it leaves unset."""
    for d, key, like, unset in found.values():
        if unset == side and key not in d:
            d[key] = zeros_like(like)


def after(log, found: dict, full: list, n: int, pred, src) -> None:
    """After the `if`: each dict key whose branch values exist on different paths (set in
    one branch only, or a flagged value in one) gets the flag of the path taken."""
    if len(full) != 2:
        return
    for j, slot in enumerate(log.slots):
        if slot.kind != "dict" or n + j >= min(len(full[0]), len(full[1])):
            continue
        d, key = slot.obj, slot.key
        unset = found.get((id(d), key))
        sides = [_flag(d, key, full[k][n + j], unset is not None and unset[3] == k)
                 for k in (0, 1)]
        if all(s is True for s in sides) or not is_variable(d.get(key)):
            continue
        flag = rt.logical_or(rt.logical_and(pred, _tensor(sides[0])),
                             rt.logical_and(rt.logical_not(pred), _tensor(sides[1])))
        mark(d[key], flag, key, src, KeyError(key))
        key_flags.register(d, key, d[key], flag)


def _flag(d, key, value, unset: bool):
    """Where the branch's value of `d[key]` exists: False (left unset), its flag, or True."""
    if unset:
        return False
    known = key_flags.entry(d, key)
    # (a branch's value is a copy of the Variable object: the same program value by name)
    same = known is not None and is_variable(value) and known[0].name == value.name
    return known[1] if same else True


def _tensor(flag):
    return rt.full([], flag, "bool") if isinstance(flag, bool) else flag
