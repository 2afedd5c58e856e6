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
entry the `if`'s. Only a dict that a local name alone holds, as the state of a loop in a
block whose flags reach the function's top level (the top-level block, a branch of a tensor
`if` there, the body of such a loop: `key_flags.grows_here`), and only a tensor or a Python
number under the key: a dict the caller can reach would keep the key after the call on
every path; those stay refused (`loop_keys.refuse_key_change`).

`_GraphWhile` keeps one `LoopNewKeys`: a body trace that sets such a key raises `NewKeys`
(the loop is built again from a copy of the dict with zeros under the key); each trace takes
the flags off the loop variables (`enter`), returns the body's (`leave`), and the op's
results get theirs (`finish`).
"""
from __future__ import annotations

import runtime as rt
from runtime.core import active_builder

from . import key_flags
from .block_values import zeros_like
from .unbound import mark
from .variables import is_variable


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
        self.some_trips: set = set()  # (state index, key) the body sets on some trips only

    def flagged_on_entry(self, state: list) -> None:
        """Keys of the state's dicts that exist on some paths only when the loop starts (a
        tensor `if` before it set them): the loop carries their flags too."""
        if not self.outermost:
            return
        for i, v in enumerate(state):
            if type(v) is dict:
                for key, flag in key_flags.flags_of(v).items():
                    self.like[(i, key)], self.entry[(i, key)] = v[key], flag

    def prefilled(self, state: list) -> list:
        """The loop's initial state: each dict a trace added keys to has zeros under them
        (in place: aliases see them, a tensor `if` around the loop sees the dict changed)."""
        state = list(state)
        for (i, key), like in self.like.items():
            if key not in state[i]:  # (in place: an alias, the caller's dict, see it)
                state[i][key] = zeros_like(like)
        return state

    def wrap(self, body):
        """`body`, whose traces (probes too) let a tensor `if` in it give a key of a dict a
        presence flag (`branch_keys.find`), where the loop is outermost."""
        if not self.outermost:
            return body

        def traced(*args):
            key_flags.may_grow(active_builder().block)
            return body(*args)
        return traced

    def found(self, i: int, before, after) -> None:
        """Keys the body's dict `after` (state index `i`) has beyond `before` (the keys it
        got): recorded, and `NewKeys` raised, where they can be flagged; otherwise nothing
        (the caller refuses the change)."""
        if not (isinstance(before, dict) and type(after) is dict and self.outermost):
            return
        new = [k for k in after if k not in before and _flaggable(after[k])]
        if not new or len(new) != len(after.keys() - before.keys()):
            return
        for k in new:
            self.like[(i, k)] = after[k]
        raise NewKeys()

    def start(self) -> list:
        """The flags on entry (false: the loop added the keys), as extra initial loop
        variables of the next trace."""
        self.order = sorted(self.like, key=repr)
        return [self.entry.get(k, False) if is_variable(self.entry.get(k)) else rt.full(
            [], False, "bool") for k in self.order]

    def enter(self, values) -> tuple:
        """(The loop variables without the flags, the flags): the dicts of the state get
        theirs on their keys (`attach`, once the state is the body's)."""
        n = len(values) - len(self.order)
        return list(values[:n]), list(values[n:])

    def attach(self, given: list, flags: list, src) -> None:
        """The body's (or test's) dicts: each added key's value exists where its flag is
        true; reading it elsewhere raises eager's KeyError."""
        for (i, key), flag in zip(self.order, flags, strict=True):
            d = given[i]
            if type(d) is dict and is_variable(d.get(key)):
                mark(d[key], flag, key, src, KeyError(key))
                key_flags.register(d, key, d[key], flag)

    def leave(self, out: list, flags: list) -> list:
        """The body's flags of the keys (in the body's block), as extra results: its flag on
        entry where the body left the value as it got it, the flag a tensor `if` gave it, or
        true where the body set it."""
        res = []
        for (i, key), flag in zip(self.order, flags, strict=True):
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
        for (i, key), flag in zip(self.order, flags, strict=True):
            d = out[i]
            if type(d) is dict and is_variable(d.get(key)):
                mark(d[key], flag, key, src, KeyError(key))
                key_flags.register(d, key, d[key], flag)


def _flaggable(v) -> bool:
    """A value a presence flag can go with: a graph value (not an array) or a number."""
    if is_variable(v):
        return not v.is_array
    return type(v) in (bool, int, float)


def outermost() -> bool:
    """Whether a loop built now may carry flags out: it is in the function's top-level block,
    or in one whose `if`s and loops pass their flags out too (`key_flags.grows_here`)."""
    return key_flags.grows_here()
