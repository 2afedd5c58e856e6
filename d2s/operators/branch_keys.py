"""A dict key that one branch of a tensor `if` sets and the other leaves unset.

    d = {"a": x}
    if x.sum() > 0:
        d["b"] = x * 2      # eager code has d["b"] only where the condition held

The `if` is traced again with zeros under the key in the branch that leaves it unset, so
both branches give the dict one key set; after the `if` the key's value carries a presence
flag (`key_flags`): the condition, or its negation. Reading the value where the flag is
false raises eager's `KeyError: 'b'` when the program runs (a read check, `unbound.mark`);
`'b' in d`, `d.get('b', v)` and `len(d)` follow the flag. A str under the key
(`d["tag"] = "hi"`) is None where unset, so the `if` gives out the str's id
(`branch_strs`), whose read check raises the `KeyError`. A later `if` whose branches leave
such a key holding values of different flags gives it the flag of the path taken.

Each branch passes the flags of such keys out as extra `cond` outputs (`branch_flags`: a
flag made inside a branch's block, by an `if` nested in it, reaches code after the `if` only
so), and after the `if` the key holds the `cond`'s value under the output flag (`after`).
So `if`s nest, in the top-level block, in each other's branches and in the body of a graph
loop that carries the flags out (`loop_new_keys`; `key_flags.grows_here`). Only a dict that
a local name alone holds: a dict the caller can reach would keep the key after the call on
every path; it stays refused (`mutation_explain`), as does an `if` in a block whose flags
nothing carries out (the body of a loop inside another loop's `if`, ...).
"""
from __future__ import annotations

import runtime as rt
from runtime.core import active_builder

from . import branch_sets, key_flags, key_ranks
from .block_values import zeros_like
from .mutation import MISSING
from .str_arrays import ChosenStr
from .unbound import mark
from .variables import is_variable


def find(log, names, outs, passed, found: dict) -> bool:
    """Keys of local dicts that one traced branch set to a tensor and the other left unset:
    new entries of `found` ((id(dict), key) -> (dict, key, a value like it, the index of the
    branch that leaves it unset)). True if any new."""
    if len(outs) != 2:
        return False
    # (a flag made in a block is read outside it only where a graph loop carries it out)
    if not key_flags.grows_here():
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
        if not (is_variable(like) and not like.is_array or type(like) in (bool, int, float) or
                _text(like)):
            continue  # (a Python number: a graph value standing for it, `zeros_like`; a
            # str: its id, None's where unset, `branch_strs`)
        found[ident] = (slot.obj, slot.key, like, 0 if a is MISSING else 1)
        new = True
    return new


def _text(v) -> bool:
    """A str, or a str the run chooses among known strs (`str_arrays.ChosenStr`)."""
    return type(v) is str or isinstance(v, ChosenStr) and v.texts is not None


def fill(found: dict, side: int, orders: dict, log, out: list) -> None:
    """In the traced branch `side` (0: if, 1: else): zeros under the keys it leaves unset,
    the keys in the order the if branch left them (`orders`: a dict's ident -> its keys
    there; `cond` compares the orders), also of the other dicts the branch changed or gives
    out (`out`: its values; `changed_dicts`). Keys the else branch set in another order than
    the if branch are in an order the run decides (`key_flags.mark_reordered`)."""
    src, every = log.src, {id(d): d for d, _, _, _ in found.values()}
    every.update(changed_dicts(log, out))
    own = {i: list(d) for i, d in every.items()}  # (the keys this branch set, in its order)
    for d, key, like, unset in found.values():
        if unset == side and key not in d:
            d[key] = None if _text(like) else zeros_like(like)
    for i, d in every.items():
        if side == 0 or i not in orders:
            orders[i] = list(d)
            continue
        order = orders[i]
        if set(order) == set(d) and order != list(d):
            mine = [k for k in order if k in own[i]]
            if mine != own[i]:
                first = next(j for j, (a, b) in enumerate(zip(mine, own[i])) if a != b)
                key_flags.mark_reordered(d, own[i][first:], src)
                orders[("else", i)] = (d, own[i])  # (`after`: the order flag)
            items = [(k, d[k]) for k in order]
            d.clear()
            d.update(items)


def changed_dicts(log, out: list) -> dict:
    """The dicts a traced branch may leave with new keys (ident -> dict): those the walk
    found before the `if`, and a dict a name holds after the branch (made in it)."""
    found = {id(o): o for o, kind, _, _ in log.seen.values() if kind == "dict" and o}
    for i, v in enumerate(out):
        if type(v) is dict and len(v) > 1 and id(v) not in found:
            found[("out", i)] = v
    return found


def enter_branch(log) -> None:
    """A branch being traced (its block the current one) inside a block whose `if`s may give
    keys flags (the top-level block, a branch of such an `if`, the body of a graph loop that
    carries them out): so may its `if`s, each branch passing its flags out as outputs. The
    dicts the `if` may change, as they are before it, give their keys' order (`key_ranks`)."""
    b = active_builder()
    parent = b.block.parent_block
    if parent is b.program.global_block():
        key_ranks.before_if(o for o, kind, _, _ in log.seen.values() if kind == "dict")
    if parent is b.program.global_block() or key_flags.grows_in(parent):
        key_flags.may_grow(b.block)


def branch_flags(log, found: dict, outs: dict, side: int) -> tuple:
    """The traced branch `side`'s presence flags of the dict keys whose values exist on some
    paths (set by one branch only, or flagged in one), as extra `cond` outputs (a flag made
    inside the branch's block reaches code after the `if` only so). New keys are added to
    `outs` ((id(dict), key) -> (dict, key)), and the `if` is traced again."""
    if not key_flags.grows_here():
        return ()  # (an `if` in a block whose flags nothing carries out)
    branch_sets.flag_outputs(log, outs, side)  # (sets: ("set", id, item) -> (set, item))
    if not (found or key_flags.any_flags() or outs):
        return ()  # (most functions: no such key, nothing to look at)
    flags = _flags(log, found, outs, side)
    branch_sets.drop_branch_flags()
    return flags


def _flags(log, found: dict, outs: dict, side: int) -> tuple:
    log.changed()
    for slot in log.slots:
        ident = (id(slot.obj), slot.key)
        if slot.kind == "dict" and ident not in outs and (
                ident in found or _flagged(slot.obj, slot.key) is not None):
            outs[ident] = (slot.obj, slot.key)
    flags = []
    for ident, (d, key) in outs.items():
        if ident[0] == "set":
            flags.append(branch_sets.present(d, key))
            continue
        unset = found.get(ident)
        if unset is not None and unset[3] == side or key not in d:
            flags.append(rt.full([], False, "bool"))
        else:
            flag = _flagged(d, key)
            flags.append(rt.full([], True, "bool") if flag is None else flag)
    return tuple(flags)


def _flagged(d, key):
    """The presence flag of `d[key]` as `d` holds it now, or None."""
    return key_flags.flag_for(d, key, d.get(key))


def after(outs: dict, present: list, log, found: dict, orders: dict) -> None:
    """After the `if`: each dict key whose branch values exist on different paths (set in
    one branch only, or flagged in one) holds the `cond`'s value where its output flag
    (`present`, from `branch_flags`) is true: reading it elsewhere raises eager's KeyError.
    The dicts `fill` ordered keep that order (the `if` writes its outputs key by key); one
    whose keys the else branch set in another order gets `pred` as its order flag
    (`key_flags.order_flag`: a returned dict has the order of the branch taken)."""
    src, pred = log.src, getattr(log, "pred", None)
    reordered = [v for k, v in orders.items() if type(k) is tuple and k[0] == "else"]
    for d in [d for d, _, _, _ in found.values()] + [d for d, _ in reordered]:
        order = orders.get(id(d))
        if order is not None and set(order) == set(d) and list(d) != order:
            items = [(k, d[k]) for k in order]
            d.clear()
            d.update(items)
    for d, else_order in reordered:
        if id(d) in orders:  # (a dict made in each branch: no order flag)
            key_flags.order_flag(d, pred, else_order)
    key_ranks.after_if(pred, found)  # (the ranks of the keys its branches stored)
    sets: dict = {}
    for ident, (d, key), flag in zip(outs, outs.values(), present, strict=True):
        if ident[0] == "set":
            sets.setdefault(id(d), (d, {}))[1][key] = flag
        elif is_variable(d.get(key)) or _text(d.get(key)):
            mark(getattr(d[key], "id", d[key]), flag, key, src, KeyError(key))
            key_flags.register(d, key, d[key], flag)
    for d, flags in sets.values():  # (sets whose items the run decides: `branch_sets`)
        branch_sets.flagged(d, flags, log)
