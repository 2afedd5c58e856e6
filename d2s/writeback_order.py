"""The key order of a dict the caller can reach, where the run decides it (issue 35).

    def step(x, logs):              # `logs` the caller's dict
        if x.mean() > 0:
            logs["aux"] = x * 2     # eager code stores 'aux' first on these runs ...
        logs["main"] = x
        logs["aux"] = x - 1         # ... and after 'main' on the others

Each key's rank, the moment eager code first stored it (`operators.key_ranks`), is a
program output (`KeyOrder`, one more place `writeback.capture` writes back); after the run
has written the values back and the Python values the trace set are set again
(`side_effects.Effects.replay`), `settle` sorts the dict's keys by the ranks of this run, as
eager code leaves them.
"""
from __future__ import annotations

import runtime as rt

from .operators import key_flags, key_ranks
from .operators.variables import is_variable


class KeyOrder:
    """The ranks of the keys of `obj` (a dict), as program outputs."""

    kind = "order"
    key = None

    def __init__(self, obj: dict, path: str, ranks: dict):
        self.obj, self.path = obj, path
        self.keys = tuple(ranks)
        self.ranks = tuple(r.value if is_variable(r.value) else rt.full([], r.value, "int64")
                           for r in ranks.values())

    def get(self):
        return self.ranks

    def set(self, value) -> None:
        """(`writeback.apply`, before it writes the other places: the keys the dict holds
        now keep their places; the others are sorted by `settle`, after the replay)"""
        self.before = list(self.obj)

    def ident(self):
        return (id(self.obj), "order", None)

    def sort(self, ranks) -> None:
        """Put the keys the call added in the order of `ranks` (this run's), after those the
        dict held before (a program traced with the dict empty serves a call where it holds
        them: eager code leaves them where they were); keys without a rank as they were."""
        at = {k: int(r.item() if hasattr(r, "item") else r) for k, r in zip(
            self.keys, ranks, strict=True)}
        d, old = self.obj, {k: i for i, k in enumerate(getattr(self, "before", ()))}
        keys = list(d)
        order = sorted(keys, key=lambda k: (k not in old, k not in at, old.get(
            k, at.get(k, 0)), keys.index(k)))
        if order != keys:
            items = [(k, d[k]) for k in order]
            d.clear()
            d.update(items)


def places(log, copies=()) -> list:
    """A `KeyOrder` for each dict the caller reaches (`log`: the walk of what it reaches,
    `mutation`) whose keys' order the run decides, where the moment each key was first stored
    is known (a rank that is a graph value); for a dict argument the trace got as a copy
    (`writeback.Copy`), the caller's own dict in its place. Keys a tensor `if` stores in
    another order per branch with no known moment are refused (`key_flags.
    refuse_reordered`). (Where no moment is known for a key set again after a loop or a
    nested `if` left it on some paths, the dict keeps the trace's order: refusing it refused
    dicts whose order the trace has on every run, which the heuristics of `key_flags.
    check_order` cannot tell apart; docs/d2s.md, a known gap.)"""
    originals = {id(c.copy): c.original for c in copies if type(c.copy) is dict}
    out = []
    for d, kind, path, _ in log.seen.values():
        if kind != "dict" or type(d) is not dict or len(d) < 2:
            continue
        ranks = key_ranks.ranks_of(d)
        if not (ranks and any(is_variable(r.value) for r in ranks.values())):
            key_flags.refuse_reordered([d])  # (keys stored in another order per branch)
            continue
        out.append(KeyOrder(originals.get(id(d), d), path, ranks))
    return out


def settle(result) -> None:
    """After a call's places are written back and its Python values set again: the dicts
    `KeyOrder` places stand for get this run's key order (`result`: the call's result as the
    program gave it, a `writeback.WithState` where it writes places back)."""
    if not (isinstance(result, tuple) and len(result) == 3 and hasattr(result[1], "slots")):
        return
    for s, v in zip(result[1].slots, result[2]):
        if type(s) is KeyOrder:
            s.sort(v)
