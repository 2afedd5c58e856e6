"""Returned dicts whose keys exist on some paths only (`key_flags`): `results[c] = ...` after a
tensor `continue`, or in one branch of a tensor `if`. The program returns every such key's
value beside its presence flag (a `PresentKeys` in place of the dict); after the run
`restore` rebuilds the dict with the keys whose flag is true, as eager code has it.
"""
from __future__ import annotations

import runtime as rt
from runtime import pytree

from . import key_ranks
from .key_flags import check_order, flags_of, order_of, unchecked


class PresentKeys(tuple):
    """(keys, values, flags, order) of a returned dict: each flag a bool graph value, or None
    for a key that exists on every path; `order` None, or (a bool graph value, the keys'
    order where it is false: `key_flags.order_of`; or ("ranks", each key's rank:
    `key_ranks`)). A tuple, so the program's outputs
    flatten through it."""


def _tuple(x) -> bool:
    """A tuple, also the `(out, places, values)` of a call that writes state back
    (`writeback.WithState`), not a namedtuple."""
    return isinstance(x, tuple) and not hasattr(x, "_fields")


def mark(out, fn=None, memo=None):
    """`out` with each such dict (directly, or inside lists, tuples and dicts) replaced by a
    `PresentKeys`; anything else as it is. One object met at several places gives one
    (`memo`: `owned_results.Shared` keeps them one object after the call)."""
    memo = {} if memo is None else memo
    done = memo.get(id(out))
    if done is None:
        done = memo[id(out)] = (out, _marked(out, fn, memo))
    return done[1]


def _marked(out, fn, memo):
    if type(out) is list or _tuple(out):
        items = [mark(v, fn, memo) for v in out]
        changed = any(a is not b for a, b in zip(items, out, strict=True))
        return type(out)(items) if changed else out
    if type(out) is not dict:
        return out
    flags, order = flags_of(out), order_of(out)
    items = {k: mark(v, fn, memo) for k, v in out.items()}
    ranks = key_ranks.ranks_of(out)
    if order is not None and ranks is not None and check_order(out, "returning the dict", fn,
                                                               ranks=ranks):
        order = None  # (an `if` ordered it, and a later one nested in a branch: the ranks)
    if check_order(out, "returning the dict", fn, ordered=order is not None,
                   ranks=ranks if order is None else None):
        order = ("ranks", tuple(ranks[k].value for k in out))  # (`restore` sorts by them)
    if not flags and order is None:
        changed = any(items[k] is not out[k] for k in out)
        return items if changed else out
    keys = tuple(out)
    values = tuple(_unchecked_copy(out[k]) if k in flags else items[k] for k in keys)
    return PresentKeys((keys, values, tuple(flags.get(k) for k in keys), order))


class PresentPlace:
    """A key of a dict the caller can reach (an argument's, an attribute's) that exists on
    some paths only: its value and its flag are outputs of the program, and after each run
    (`writeback.apply`) the key holds the value where the flag is true; elsewhere the dict
    keeps what it held (the trace found the key absent: a program traced with it present is
    another, `guards`), as eager code leaves the dict."""

    kind = "present"

    def __init__(self, slot, value, flag):
        self.slot, self.value, self.flag = slot, value, flag
        self.path, self.obj, self.key = slot.path, slot.obj, slot.key  # (as a `Slot`'s)

    def get(self):
        return (_unchecked_copy(self.value), self.flag)

    def set(self, value) -> None:
        v, present = value
        if bool(present):  # (elsewhere the dict keeps what it held before the run)
            self.slot.set(v)

    def ident(self):
        return self.slot.ident()


def read_leaves(out) -> list:
    """The leaves of a returned `out` that returning it reads: all but the values under keys
    that may be absent (their read check would raise eager's `KeyError` for a dict that eager
    code returns without that key)."""
    if type(out) in (list, tuple):
        return [x for v in out for x in read_leaves(v)]
    if type(out) is dict:
        flags = flags_of(out)
        return [x for k, v in out.items() if k not in flags for x in read_leaves(v)]
    if getattr(type(out), "run_str", False):  # (a str the run chooses: its id, whose
        return [out.id]  # check raises eager's KeyError where its key is absent)
    return pytree.flatten(out)[0]  # (namedtuples, dataclasses: as the program's outputs)


def _unchecked_copy(value):
    """The value of a key that may be absent, without its read check (which raises eager's
    `KeyError` where code reads an absent key; returning the dict reads nothing)."""
    if not hasattr(value, "on_read"):
        return value
    copy = unchecked(value, lambda: rt.assign(value))
    copy.python_scalar = value.python_scalar  # (a Python number stays one)
    return copy


def restore(result, memo=None):
    """The call's result with each `PresentKeys` a dict of the keys present in this run (also
    inside the result of a call that writes state back, `writeback.WithState`); a list, tuple
    or dict holding none is itself (the caller's own: `owned_results`). One object met at
    several places (returned and stored: `owned_results.Shared`) gives one dict (`memo`)."""
    memo = {} if memo is None else memo
    done = memo.get(id(result))
    if done is not None:
        return done[1]
    out = _restored(result, memo)
    memo[id(result)] = (result, out)
    return out


def _restored(result, memo):
    if isinstance(result, PresentKeys):
        keys, values, flags, order = result
        out = {k: restore(v, memo) for k, v, f in zip(keys, values, flags, strict=True)
               if f is None or bool(f)}
        if order is not None and isinstance(order[0], str):  # (each key's rank: the
            # moment eager code first stored it, `key_ranks`)
            rank = dict(zip(keys, order[1], strict=True))
            out = {k: out[k] for k in sorted(out, key=lambda k: int(rank[k]))}
        elif order is not None and not bool(order[0]):  # (the else branch's order: its keys,
            # then those added after the `if`)
            first = [k for k in order[1] if k in out]
            out = {k: out[k] for k in first + [k for k in out if k not in order[1]]}
        return out
    if type(result) in (list, dict) or _tuple(result):
        items = result.items() if type(result) is dict else enumerate(result)
        new = [(k, restore(v, memo)) for k, v in items]
        if all(v is (result[k]) for k, v in new):
            return result
        return dict(new) if type(result) is dict else type(result)(v for _, v in new)
    return result


def in_tree(tree) -> bool:
    """Whether a `runtime.pytree` tree (of a marked result) holds a `PresentKeys`."""
    if tree is None:
        return False
    (_, cls, _), subtrees = tree
    return cls is PresentKeys or any(in_tree(t) for t in subtrees)
