"""Dict keys that the body of a graph loop adds: eager code has the key after the loop only
where the loop ran at least once.

    stats = {"n": rt.zeros([])}
    for i in range(n_tensor):
        stats["m"] = h.mean()    # eager: stats["m"] exists after the loop iff n_tensor > 0

The loop is traced again with zeros under the key before it (`prefill`), so it carries one
set of keys, and with one more loop variable per key: its *presence flag* (`key_flags`),
false on entry and true after a trip that set the key. Inside the body and after the loop
the key's value holds that flag: `'m' in stats`, `stats.get('m', v)` and `len(stats)` follow
it, and reading the value where it is false raises eager's `KeyError: 'm'` when the program
runs (a read check, `unbound.mark`).

Only a dict that a local name alone holds, in a loop outside any tensor `if` or other graph
loop, whose body sets the key to a tensor on every trip (a key set under a tensor `if` in the
body is refused there, by `branch_keys`): a dict the caller can reach would keep the key after
the call on every path, and a flag inside a block cannot be read outside it; those stay
refused (`loop_keys`).
"""
from __future__ import annotations

import contextlib

import runtime as rt
from runtime.core import active_builder

from . import key_flags
from .aliases import other_references
from .block_values import zeros_like
from .unbound import mark
from .variables import is_variable


class LoopNewKeys:
    """The keys of one graph loop's dicts whose presence the run decides: keys its body adds,
    and keys that already held a presence flag on entry (set by one branch of a tensor `if`,
    or by an inner loop), whose flags the loop carries too."""

    def __init__(self):
        self.allowed = flags_leave_blocks()
        self.found_keys: dict = {}  # (state index, key) -> a value like the body's
        self.order: list = []  # (state index, key) of the trace being built (`start`)
        self.given: list = []  # the body's values of the keys on entry (this trace)

    def found(self, carried: list, keys: list, out: list, names: tuple, dicts: dict,
              log) -> bool:
        """Whether the body added keys (to a carried dict of the state, that a local name
        alone holds) that it sets to a tensor: recorded, to trace the loop again. False
        where any added key is not such a key (`loop_keys` refuses it)."""
        if not self.allowed:
            return False
        new = {}
        for k, i in enumerate(carried):
            before, after = keys[k], out[i]
            if not (isinstance(before, dict) and type(after) is dict) or i not in dicts:
                continue
            for key in after.keys() - before.keys():
                value = after[key]
                if not is_variable(value) or value.is_array or other_references(
                        dicts[i], names[i], (log,)):
                    return False
                new[(i, key)] = value
        self.found_keys.update(new)
        return bool(new)

    def prefill(self, state: list) -> None:
        """Zeros under each found key in the loop's initial dicts (d2s's copies)."""
        for (i, key), like in self.found_keys.items():
            if key not in state[i]:
                state[i][key] = zeros_like(like)

    def start(self, state: list, carried: list) -> list:
        """The flags on entry, as extra initial loop variables of the next trace: false for
        a key the body adds, the flag a key holds on entry."""
        flagged = {(i, key): flag for i in carried if type(state[i]) is dict
                   for key, flag in key_flags.flags_of(state[i]).items()}
        self.order = sorted(self.found_keys.keys() | flagged.keys(), key=repr)
        return [_tensor(False if ik in self.found_keys else flagged[ik]) for ik in self.order]

    def enter(self, values: tuple) -> tuple:
        """(the loop variables without the flags, the flags)."""
        n = len(values) - len(self.order)
        return tuple(values[:n]), list(values[n:])

    def attach(self, given: list, flags: list, src) -> None:
        """The keys' values the body starts from hold their flags."""
        self.given = []
        for (i, key), flag in zip(self.order, flags, strict=True):
            d = given[i]
            self.given.append(d.get(key))
            _flagged(d, key, flag, src)

    def leave(self, out: list, flags: list) -> list:
        """The body's flags: its entry flag where it left the key's value as it got it, the
        flag of a new value that has one (an inner loop's), else true (it set the key)."""
        return [_tensor(flag if value is before else
                        key_flags.flag_of(out[i], key) if key_flags.flag_of(out[i], key)
                        is not None else True)
                for (i, key), before, flag in zip(self.order, self.given, flags, strict=True)
                for value in (out[i].get(key) if type(out[i]) is dict else None,)]

    def finish(self, out: list, flags: list, src) -> None:
        """After the loop: each key's value holds its flag."""
        for (i, key), flag in zip(self.order, flags, strict=True):
            if type(out[i]) is dict:
                _flagged(out[i], key, flag, src)


_BUILDING = "_d2s_loops_building"  # the builder's blocks in which graph loops are built


def flags_leave_blocks() -> bool:
    """Whether a presence flag made here reaches the code after the blocks around it: a flag
    inside a block cannot be read outside it, so here is inside no block but the bodies of
    graph loops (real or probed: blocks made by a loop being built in their parent), which
    carry it on (a tensor `if`'s, or a loop's, in the function's own block, or in such a
    body)."""
    b = active_builder()
    return b is not None and all(
        blk.parent is None or blk.parent in getattr(b, _BUILDING, ()) for blk in
        b.block.ancestors())


@contextlib.contextmanager
def building():
    """While a graph loop is built in the current block (its test, body and probes traced in
    blocks made in it)."""
    b = active_builder()
    blocks = getattr(b, _BUILDING, None)
    if blocks is None:
        blocks = []
        setattr(b, _BUILDING, blocks)
    blocks.append(b.block.idx)
    try:
        yield
    finally:
        blocks.remove(b.block.idx)


def _tensor(flag):
    return rt.full([], flag, "bool") if isinstance(flag, bool) else flag


def _flagged(d: dict, key, flag, src) -> None:
    value = d.get(key)
    if is_variable(value):
        mark(value, flag, key, src, KeyError(key))
        key_flags.register(d, key, value, _tensor(flag))
