"""Dict keys first set in the body of a graph loop:

    stats = {}
    for i in range(n):              # n a tensor: a `while` op
        stats["n"] = x * i          # eager code has stats["n"] only where the loop ran

The loop starts with zeros under the key (the dtype and shape the body gives it) and
carries, as one more loop variable, the key's *presence flag* (`key_flags`): false on entry,
true from the trip that set it on (a tensor `if` in the body that sets it in one branch
gives the flag of the path taken, `branch_keys`). In the body, reading the key where no trip
set it yet raises eager's `KeyError` when the program runs, and `in` / `.get` follow the
flag; after the loop the key holds the op's result under the op's flag, so reads, `in`,
`.get`, `len()` and a `for` over the dict behave as eager code.

A key a tensor `if` before the loop set on one path is carried the same way, its flag on
entry the `if`'s; so is a key of a dict the body changes as an object rather than by a
carried name (`d.setdefault(k, v)`, a helper's `d[k] = v`, an argument's dict: the loop's
changed places, `held`; a dict the caller reaches is written back where the run set the
key). Only in a loop in a block whose flags reach the function's top level (the top-level
block, a branch of a tensor `if` there, the body of such a loop: `key_flags.grows_here`),
and only a tensor or a Python number under the key; other keys stay refused
(`loop_keys.refuse_key_change`, `mutation_loop`).

`_GraphWhile` keeps one `LoopNewKeys`: a body trace that sets such a key raises `NewKeys`
(the loop is built again from a copy of the dict with zeros under the key); each trace takes
the flags off the loop variables (`enter`), returns the body's (`leave`), and the op's
results get theirs (`finish`).
"""
from __future__ import annotations

import runtime as rt
from runtime.core import active_builder

from ..errors import ConversionError
from . import key_flags, key_ranks
from .block_values import zeros_like
from .loop_keys import refuse_key_change
from .mutation import MISSING
from .unbound import mark
from .variables import is_variable, where


class NewKeys(Exception):
    """A body trace set a key its loop's dict did not have on entry: the loop is built again
    with zeros under it."""


class LoopNewKeys:
    """The keys the body of one graph loop adds to the dicts of its state."""

    def __init__(self, outermost: bool):
        self.outermost = outermost  # (the loop is in the function's top-level block)
        self.like: dict = {}  # (state index, key) -> a value like the body's (zeros: entry)
        self.order: list = []  # the (state index, key) pairs of the trace being built
        self.entry: dict = {}  # (state index, key) -> its flag on entry (a key an `if` set)
        # (id(dict), key) -> (dict, key, its flag on entry): a flagged key of a dict the body
        # changes as an object, not a carried name (`d.setdefault(k, v)`, `self.stats[k] = v`,
        # a helper's `d[k] = v`: the loop's changed places, `mutation_loop`)
        self.held: dict = {}
        self.fresh: dict = {}  # (id(dict), key) -> (the zeros, the flag) of a key the body
        # first sets in such a dict (`new_held_key`)
        self.some_trips: set = set()  # (state index, key) the body sets on some trips only
        self.gone: set = set()  # (id(dict), key) of a held dict's key the body removes on
        # some paths or every one: held, its flag true on entry (`removed_held`)
        self.cleared: set = set()  # (state index, key) the body removes on every path: in
        # its place on entry where present (no trip), so the dict's order is known
        self.orders: dict = {}  # id(dict) -> its keys on entry (the held dicts)
        self.absent: set = set()  # (id(dict), key) of held keys the body's trace removed

    def flagged_on_entry(self, state: list) -> None:
        """Keys of the state's dicts that exist on some paths only when the loop starts (a
        tensor `if` before it set them): the loop carries their flags too."""
        if not self.outermost:
            return
        for i, v in enumerate(state):
            if type(v) is dict:
                for key, flag in key_flags.flags_of(v).items():
                    self.like[(i, key)], self.entry[(i, key)] = v[key], flag

    def held_by(self, slots: list, src) -> None:
        """The changed places (`Loop.slots`) that are keys a tensor `if` before the loop
        flagged, or that the body first sets (`new_held_key`): the loop carries their flags
        too (each trace of the body sees the value the loop carries under its flag; after the
        op the key holds the result under the op's flag, its flag on entry where no trip set
        it)."""
        held = []
        self.orders = {id(s.obj): list(s.obj) for s in slots if s.kind == "dict"}
        for s in (s for s in slots if s.kind == "dict"):
            fresh = self.fresh.get((id(s.obj), s.key))
            flag = fresh[1] if fresh is not None and s.obj.get(s.key) is fresh[0] else \
                key_flags.flag_of(s.obj, s.key)
            if flag is None and (id(s.obj), s.key) in self.gone and s.key in s.obj:
                flag = rt.full([], True, "bool")
            if flag is not None:
                held.append((s, flag))
        if held and not self.outermost:
            raise ConversionError(
                f"{held[0][0].path} exists only where a tensor `if` set it, and a loop whose "
                f"condition is a tensor ({where(src)}) changes it inside a graph block that "
                "passes no presence flags out (a layer of `layers[i]` with a tensor `i`, ...), "
                "so after it the key's presence would be lost. Set the key on every path "
                "before that block.", origin=src)
        self.held = {(id(s.obj), s.key): (s.obj, s.key, flag) for s, flag in held}

    def new_held_key(self, slot, like) -> None:
        """A key the body first sets in a dict it changes as an object (`d.setdefault(k, v)`,
        a helper's `d[k] = v`): zeros like the body's value under it on entry, flagged
        false, so the loop carries its flag (`held_by`), where flags can be carried out (a
        Python number too, as a key a carried dict gets)."""
        if self.outermost and _flaggable(like):
            zeros = slot.obj[slot.key] = zeros_like(like)
            self.fresh[(id(slot.obj), slot.key)] = (zeros, rt.full([], False, "bool"))

    def removed_held(self, slots: list, initial: list, src) -> None:
        """A key of a dict the body changes as an object (`box[0].pop(k)`, `self.cache`, a
        helper's `del d[k]`), which the dict had on entry with no flag, that the body removes
        on every path (put back as zeros flagged false) or on some (`d.pop(k)` under a
        tensor `if`: its flag made in the body): the loop is built again carrying its flag,
        true on entry (`held_by`). Where flags cannot be carried out it is refused
        (`loop_keys.refuse_key_change`) rather than left present after the loop."""
        self.absent = set()
        for s, like in zip(slots, initial):
            ident = (id(s.obj), s.key)
            if s.kind != "dict" or ident in self.fresh:
                continue
            if s.get() is MISSING and _flaggable(like) and self.outermost and \
                    type(s.obj) is dict:
                _put_back(s.obj, {s.key: zeros_like(like)}, self.orders.get(id(s.obj), ()))
                self.absent.add(ident)  # (in its place: present only where no trip ran)
                if ident in self.held:  # (its flag: false where this trip removed it)
                    continue
            elif ident in self.held or not _made_here(key_flags.flag_of(s.obj, s.key)):
                continue
            else:  # (set again on a later trip, eager code has it at the end)
                key_flags.mark_order_undecided(s.key)
            if not self.outermost or ident in self.gone:
                refuse_key_change(s.path[:-len(f"[{s.key!r}]")], s.key, src)
            self.gone.add(ident)
            raise NewKeys()

    def held_flags(self) -> list:
        """The body's flags of the held keys, before the log puts the dicts back: the flag
        of the value it left (its flag on entry where it kept the value), true where it set
        the key. One the body sets on some trips only has a place among the dict's keys that
        the run decides (`key_flags.check_order`)."""
        flags = [key_flags.flag_for(d, key, d.get(key)) for d, key, _ in self.held.values()]
        for ident, flag in zip(self.held, flags, strict=True):
            if flag is not None and ident not in self.absent:
                key_flags.mark_order_undecided(ident[1])
        return [rt.full([], True, "bool") if f is None else f for f in flags]

    def prefilled(self, state: list) -> list:
        """The loop's initial state: each dict a trace added keys to has zeros under them
        (in place: aliases see them, a tensor `if` around the loop sees the dict changed)."""
        state = list(state)
        for (i, key), like in self.like.items():
            if key not in state[i]:  # (in place: an alias, the caller's dict, see it)
                state[i][key] = zeros_like(like)
        self.before = [(v, dict(v)) if type(v) is dict else (v, None) for v in state]  # (the
        return state  # dicts and their values on entry: `finish`, the ranks of their keys)

    def wrap(self, body):
        """`body`, whose traces (probes too) let a tensor `if` in it give a key of a dict a
        presence flag (`branch_keys.find`), where the loop is outermost."""
        if not self.outermost:
            return body

        def traced(*args):
            key_flags.may_grow(active_builder().block)
            return body(*args)
        return traced

    def removed(self, i: int, before: dict, after) -> None:
        """A carried dict as the body got it (`before`, a copy) and left it (`after`): a key
        the body removes on every path (`d.pop(k)`, `del d[k]` not under a tensor `if`) is
        put back in its place as zeros flagged false, so the loop carries its presence flag
        (true on entry, `found`): eager code has it after the loop only where no trip ran.
        Keys the body moves (`v = d.pop(k)`, then `d[k] = v`: at the end after a trip) are
        in an order the run decides (`key_flags.check_order` refuses reading it)."""
        if type(after) is not dict:
            return
        kept = [k for k in before if k in after]
        moved = [k for k, j in zip(kept, [k for k in after if k in before]) if k != j]
        for k in moved:
            key_flags.mark_order_undecided(k)
        gone = [k for k in before if k not in after and _flaggable(before[k])]
        if gone and self.outermost:
            self.cleared.update((i, k) for k in gone)
            _put_back(after, {k: zeros_like(before[k]) for k in gone}, list(before))

    def found(self, i: int, before, after) -> None:
        """Keys the body's dict `after` (state index `i`) has beyond `before` (the keys it
        got): recorded, and `NewKeys` raised, where they can be flagged; otherwise nothing
        (the caller refuses the change)."""
        if not (isinstance(before, dict) and type(after) is dict and self.outermost):
            return
        new = [k for k in after if k not in before and _flaggable(after[k])]
        # (a key the dict had on entry that the body removes on some paths: `d.pop(k)` under
        # a tensor `if`, its flag made in the body; carried, true on entry)
        popped = [k for k in before if k in after and (i, k) not in self.like and
                  _flaggable(after[k]) and _made_here(key_flags.flag_of(after, k))]
        if not (new or popped) or len(new) != len(after.keys() - before.keys()):
            return
        for k in new + popped:
            self.like[(i, k)] = after[k]
        self.entry.update({(i, k): True for k in popped})
        for k in popped:  # (set again on a later trip, eager code has it at the end)
            if (i, k) not in self.cleared:
                key_flags.mark_order_undecided(k)
        raise NewKeys()

    def start(self) -> list:
        """The flags on entry (false: the loop added the keys), as extra initial loop
        variables of the next trace."""
        self.order = sorted(self.like, key=repr)
        return [self.entry[k] if is_variable(self.entry.get(k)) else rt.full(
            [], self.entry.get(k) is True, "bool") for k in self.order] + [
            f for _, _, f in self.held.values()]

    def enter(self, values) -> tuple:
        """(The loop variables without the flags, the flags): the dicts of the state get
        theirs on their keys (`attach`, once the state is the body's)."""
        n = len(values) - len(self.order) - len(self.held)
        return list(values[:n]), list(values[n:])

    def attach(self, given: list, flags: list, src) -> None:
        """The body's (or test's) dicts: each added key's value exists where its flag is
        true; reading it elsewhere raises eager's KeyError."""
        self._flag_values([given[i] for i, _ in self.order], flags, src)

    def _flag_values(self, dicts: list, flags: list, src) -> None:
        """Each key's value (in the dicts of the state, `dicts`, then in the held dicts)
        exists where its flag is true."""
        keys = [key for _, key in self.order] + [key for _, key, _ in self.held.values()]
        dicts = dicts + [d for d, _, _ in self.held.values()]
        for d, key, flag in zip(dicts, keys, flags, strict=True):
            if type(d) is dict and is_variable(d.get(key)):
                mark(d[key], flag, key, src, KeyError(key))
                key_flags.register(d, key, d[key], flag)

    def leave(self, out: list, flags: list) -> list:
        """The body's flags of the keys (in the body's block), as extra results: its flag on
        entry where the body left the value as it got it, the flag a tensor `if` gave it, or
        true where the body set it."""
        res = []
        for (i, key), flag in zip(self.order, flags[:len(self.order)], strict=True):
            d = out[i]
            value = d.get(key) if type(d) is dict else None
            now = key_flags.flag_for(d, key, value) if type(d) is dict else None
            now = True if now is None else now
            if now is not True:
                self.some_trips.add((i, key))
            if is_variable(value):  # (returning it from the body reads nothing)
                value.on_read = None
            res.append(rt.full([], True, "bool") if now is True else now)
        return res

    def finish(self, out: list, flags: list, src) -> None:
        """After the op: each added key holds the op's result, present where its flag is. A
        key the body adds on some trips only, before another key it adds, is at the end on
        the paths where a later trip added it: the dict's order is the run's
        (`key_flags.check_order`)."""
        for (i, key) in self.some_trips & self.like.keys() - self.entry.keys():
            d = out[i]
            later = list(d)[list(d).index(key) + 1:] if type(d) is dict and key in d else []
            if any((i, k) in self.like and (i, k) not in self.entry for k in later):
                key_flags.mark_order_undecided(key)
        self._flag_values([out[i] for i, _ in self.order], flags, src)
        key_ranks.after_loop(getattr(self, "before", ()), out, self.like, self.entry)


def _put_back(d: dict, zeros: dict, order) -> None:
    """`d` with the keys of `zeros` back, their values absent (a presence flag false), the
    keys in `order` (the dict's on entry) first: in place, so aliases see it."""
    absent = rt.full([], False, "bool")
    values = {**d, **zeros}
    d.clear()
    d.update((k, values[k]) for k in [*order, *values] if k in values and k not in d)
    for k in zeros:
        key_flags.register(d, k, d[k], absent)


def _made_here(flag) -> bool:
    """Whether `flag` (a presence flag) was made in the block being traced (the body)."""
    return is_variable(flag) and flag.block is active_builder().block


def _flaggable(v) -> bool:
    """A value a presence flag can go with: a graph value (not an array) or a number."""
    if is_variable(v):
        return not v.is_array
    return type(v) in (bool, int, float)


def outermost() -> bool:
    """Whether a loop built now may carry flags out: it is in the function's top-level block,
    or in one whose `if`s and loops pass their flags out too (`key_flags.grows_here`)."""
    return key_flags.grows_here()
