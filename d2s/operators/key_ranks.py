"""The order of a dict's keys where the run decides it: each key's *rank*, the moment eager
code first stored it (Python keeps a dict's keys in the order they were first stored).

    d = {}
    if x.mean() > 0:
        d["a"] = x * 2          # 'a' first here on the runs that take this branch ...
    d["b"] = x + 1
    d["a"] = x - 1              # ... and here (after 'b') on the others

Each store of a constant key (`d["a"] = v`, `_d2s.set_item`) made by the converted code
counts one more moment (`note_store`). A key stored where the dict may lack it (it exists
on some paths only: `key_flags`) gets `where(flag, old rank, now)`, an int64 graph value; a
key stored in a branch of a tensor `if` at the top level gets the rank of the branch taken
(`after_if`). So a returned dict is rebuilt in eager's order after the call
(`returned_keys`), and a `for` over it runs its keys in the order of the run (`for_order`:
one unrolled loop per order the ranks may give, the run choosing one).

A rank is known only where every store of the key went through here: a key stored by other
means (`setdefault`, `update`, a helper not converted, a graph loop's body, an `if` inside
a branch) has none, and reading the order stays refused (`key_flags.check_order`).
"""
from __future__ import annotations

import itertools
import types

import runtime as rt
from runtime.core import active_builder

from . import key_flags
from .variables import is_variable

MAX_ORDERS = 6  # (a `for` over such a dict: one unrolled copy of the body per order)


class Rank:
    """A key's rank: `value` (a Python int or an int64 graph value of the top-level block),
    the Python ints it may hold (`values`), and the dict's value it was found with."""

    __slots__ = ("held", "value", "values")

    def __init__(self, value, values: frozenset, held):
        self.value, self.values, self.held = value, values, held


def _state(b):
    state = getattr(b, "_d2s_key_ranks", None)
    if state is None:
        state = b._d2s_key_ranks = {"seq": 0, "dicts": {}, "pending": []}
    return state


def _ranks(state, d, create: bool = False):
    found = state["dicts"].get(id(d))
    if found is not None and found[0] is d:
        return found[1]
    if not create:
        return None
    ranks = {}
    for i, k in enumerate(d):  # (keys it held before its first store here: in that order,
        if key_flags.flag_of(d, k) is None:  # first; a flagged one has no known rank)
            ranks[k] = Rank(i - len(d), frozenset([i - len(d)]), d[k])
    state["dicts"][id(d)] = (d, ranks)
    return ranks


def note_store(d: dict, key, value) -> None:
    """`d[key] = value` (a constant key), before it is stored."""
    b = active_builder()
    if b is None:
        return
    state = _state(b)
    state["seq"] += 1
    seq, block = state["seq"], b.block
    top = b.program.global_block()
    ranks = _ranks(state, d, create=block is top)
    if ranks is None:  # (first seen inside a block: the keys it held have no known rank)
        ranks = {}
        state["dicts"][id(d)] = (d, ranks)
    if block is top:
        rank = _stored(d, key, seq, ranks.get(key), key_flags.flag_of(d, key))
        ranks[key] = None if rank is None else Rank(rank.value, rank.values, value)
        _drop_unknown(ranks, key)
    else:
        before = ranks.get(key)
        state["pending"].append((d, key, seq, value, block, key in d, key_flags.flag_of(
            d, key), before if before is not None and key in d and
            _same(before.held, d[key]) else None))


def settle(d: dict, key) -> None:
    """After a store `note_store` noted with no value (`setdefault`, a computed key's
    `where`): the rank goes with the value `d[key]` holds now."""
    b = active_builder()
    state = getattr(b, "_d2s_key_ranks", None) if b is not None else None
    ranks = _ranks(state, d) if state is not None else None
    if ranks and ranks.get(key) is not None and key in d and \
            b.block is b.program.global_block():
        ranks[key].held = d[key]


def before_if(dicts) -> None:
    """A tensor `if` of the top-level block begins, which may change `dicts` (as they are
    now, before it): the keys they hold get their ranks, where not known yet."""
    b = active_builder()
    state = _state(b) if b is not None else None
    for d in dicts if state is not None else ():
        if type(d) is dict:
            _ranks(state, d, create=True)


def _drop_unknown(ranks: dict, key) -> None:
    if ranks.get(key) is None:
        ranks.pop(key, None)


def _same(a, b) -> bool:
    return a is b or is_variable(a) and is_variable(b) and a.name == b.name


def _stored(d, key, seq: int, old, flag):
    """The rank of `key` after a store at moment `seq` in the top-level block, or None."""
    if key not in d:
        return Rank(seq, frozenset([seq]), None)
    if old is None or not _same(old.held, d[key]):
        return None  # (stored by other means since: no known rank)
    if flag is None:
        return old
    return Rank(rt.where(flag, _graph(old.value), _graph(seq)), old.values | {seq}, None)


def _graph(v):
    return v if is_variable(v) else rt.full([], v, "int64")


def after_if(pred, unset: dict) -> None:
    """After a tensor `if` of the top-level block (its `cond` the last one there): the keys
    stored in its branches get the rank of the branch the run takes; keys stored inside
    blocks nested in them have none (reading the order stays refused). `unset`: the keys one
    branch leaves unset ((id(dict), key) -> (..., the index of that branch), `branch_keys`)."""
    b = active_builder()
    state = getattr(b, "_d2s_key_ranks", None)
    if state is None or not state["pending"]:
        return
    top = b.program.global_block()
    if b.block is not top or not (is_variable(pred) and pred.block is top):
        return  # (an `if` inside a branch or loop body: its stores wait for the outer one)
    op = next((o for o in reversed(top.ops) if o.type == "cond"), None)
    if op is None:
        return
    sides = [b.program.blocks[i] for i in op.blocks]
    mine = [p for p in state["pending"] if _inside(p[4], sides)]
    state["pending"] = [p for p in state["pending"] if not _inside(p[4], sides) and
                        _inside(p[4], [top])]  # (not those of discarded traces)
    by_dict: dict = {}
    for p in mine:
        by_dict.setdefault(id(p[0]), (p[0], []))[1].append(p)
    for d, stores in by_dict.values():
        _merge(state, d, stores, sides, pred, unset)


def _inside(block, sides) -> bool:
    """Whether `block` is one of `sides` or inside one (not a block of a discarded trace,
    whose index a later block took)."""
    while block is not None:
        blocks = block.program.blocks
        if not (block.idx < len(blocks) and blocks[block.idx] is block):
            return False
        if any(block is s for s in sides):
            return True
        block = block.parent_block
    return False


def _merge(state, d, stores: list, sides: list, pred, unset: dict) -> None:
    ranks = _ranks(state, d, create=True)
    stored = set()
    for key in dict.fromkeys(p[1] for p in stores):
        stored.add(key)
        rank = _merged(key, [[p for p in stores if p[1] == key and _inside(p[4], [side])]
                             for side in sides], sides, pred, unset.get((id(d), key)))
        if rank is None or key not in d:
            ranks.pop(key, None)
        else:
            ranks[key] = Rank(rank.value, rank.values, d[key])
    for key in list(ranks):  # (keys no branch stored: the `if` gave their values out anew)
        if key in d and key not in stored:
            ranks[key].held = d[key]


def _merged(key, per_side: list, sides: list, pred, unset):
    """The rank of `key` after the `if`, from its stores in each branch (`per_side`). Stores
    inside an `if` nested in a branch count where they are all in one block of it (the first
    of them runs wherever any does: its moment, where the key is absent before) and their
    presence flags are the top-level block's."""
    for mine, side in zip(per_side, sides):
        if len({id(p[4]) for p in mine}) > 1 or mine and mine[0][4] is not side and not (
                _top_level(mine[0][6]) and _top_level(mine[0][7] and mine[0][7].value)):
            return None  # (stored in several blocks of the branch: the run picks the first)
    first = next(mine[0] for mine in per_side if mine)
    _, _, _, _, _, present, _, old = first
    ranks = []
    for i, mine in enumerate(per_side):
        if mine:
            ranks.append(_branch_rank(mine[0]))
        elif present:  # (the key was there before the `if`: its rank then, where known)
            ranks.append(old)
        elif unset is not None and unset[3] == i:  # (absent on this side: its rank unread)
            ranks.append(None)
        else:
            return None  # (set on this side by other means)
    if any(r is None for r in ranks) and (present or all(r is None for r in ranks)):
        return None
    a, c = (r if r is not None else ranks[1 - i] for i, r in enumerate(ranks))
    value = a.value if a is c else rt.where(pred, _graph(a.value), _graph(c.value))
    return Rank(value, a.values | c.values, None)


def _top_level(v) -> bool:
    """Whether `v` (a flag or a rank, or None) can be read in the top-level block."""
    return not is_variable(v) or v.block is active_builder().program.global_block()


def _branch_rank(store):
    """The rank a branch gives its key at its first store (`store`) in it."""
    _, _, seq, _, _, present, flag, old = store
    if not present:
        return Rank(seq, frozenset([seq]), None)
    if old is None:
        return None
    if flag is None:
        return old
    return Rank(rt.where(flag, _graph(old.value), _graph(seq)), old.values | {seq}, None)


def after_loop(before: list, after: list, added: dict, entry: dict) -> None:
    """After a graph loop of the top-level block: `before` its state as it began, each item
    with a copy of it where it is a dict (which has zeros under the keys the body adds;
    `after` holds the op's values, in that dict or a new one); `added`: (state
    index, key) of each key the body adds (or sets where a tensor `if` before the loop set
    it, its flag on entry in `entry`). Each dict's keys keep their ranks; a key the body
    adds gets the moment the loop began (one per key, in the dict's order: keys the body
    adds on some trips only before others are refused as `key_flags.check_order` says),
    or where its flag on entry held, its rank before."""
    b = active_builder()
    state = getattr(b, "_d2s_key_ranks", None) if b is not None else None
    if state is None or b.block is not b.program.global_block():
        return
    for i, ((start, d), out) in enumerate(zip(before, after)):
        if d is None or type(out) is not dict:
            continue
        old = _ranks(state, start)
        if old is None:  # (keys it held before the loop: in that order, first)
            kept = [k for k in d if (i, k) not in added or entry.get((i, k)) is not None]
            old = {k: Rank(j - len(kept), frozenset([j - len(kept)]), d[k]) for j, k in
                   enumerate(kept) if key_flags.flag_of(start, k) is None}
        ranks = {}
        for k in out:
            r = old.get(k)
            known = r is not None and k in d and _same(r.held, d[k])
            if (i, k) not in added:
                if known:
                    ranks[k] = Rank(r.value, r.values, out[k])
                continue
            flag = entry.get((i, k))
            if flag is True and known:
                ranks[k] = Rank(r.value, r.values, out[k])
            elif flag is None or flag is True:  # (absent on entry: added at this moment)
                state["seq"] += 1
                ranks[k] = Rank(state["seq"], frozenset([state["seq"]]), out[k])
            elif known:  # (a tensor `if` before the loop set it on some paths)
                state["seq"] += 1
                ranks[k] = Rank(rt.where(flag, _graph(r.value), _graph(state["seq"])),
                                r.values | {state["seq"]}, out[k])
        state["dicts"][id(out)] = (out, ranks)


def ranks_of(d) -> dict | None:
    """{key: Rank} of every key of `d` (as the dict holds it now), or None where one is
    not known."""
    b = active_builder()
    state = getattr(b, "_d2s_key_ranks", None) if b is not None else None
    if state is not None and isinstance(d, types.MappingProxyType):  # (a view's mapping)
        d = next((dd for dd, _ in state["dicts"].values() if list(dd) == list(d) and all(
            dd[k] is d[k] for k in dd)), None)
    ranks = _ranks(state, d) if state is not None and type(d) is dict else None
    if ranks is None:
        return None
    out = {}
    for k in d:
        r = ranks.get(k)
        if r is None or not _same(r.held, d[k]):
            return None
        out[k] = r
    fixed = [r.value for r in out.values() if not is_variable(r.value)]
    if fixed != sorted(fixed):  # (a key stored again by other means: not to be trusted)
        return None
    return out


def orders(ranks: dict) -> list | None:
    """The orders of the keys the ranks may give (each a list of keys), at most
    `MAX_ORDERS`; None where more."""
    keys = list(ranks)
    choices = [sorted(ranks[k].values) for k in keys]
    count = 1
    for c in choices:
        count *= len(c)
        if count > 4096:
            return None
    found = []
    for pick in itertools.product(*choices):
        order = [k for _, k in sorted(zip(pick, keys))]
        if order not in found:
            found.append(order)
            if len(found) > MAX_ORDERS:
                return None
    return found


def holds(ranks: dict, order: list):
    """A bool graph value: whether the ranks put the keys in `order` when the program runs."""
    cond = None
    for a, c in itertools.pairwise(order):
        if not (is_variable(ranks[a].value) or is_variable(ranks[c].value)):
            continue
        lt = rt.less_than(_graph(ranks[a].value), _graph(ranks[c].value))
        cond = lt if cond is None else rt.logical_and(cond, lt)
    return cond if cond is not None else rt.full([], True, "bool")
