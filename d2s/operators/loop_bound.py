"""Names first bound inside a graph loop that a trip may find unbound: the loop carries
whether each is bound.

`for i in range(n): if i == 0: level = x / else: level = level + 1` reads `level` on later
trips only; `for i in range(n): if x[i] > 0: last = x[i]` binds `last` on some trips only.
A zero placeholder of the body's shape and dtype stands for such a name on entry (as for
every name the loop binds first: `loop_initial`), and a bool graph value, false on entry,
goes around the loop with it: true once a trip bound the name. In the body the name carries
a read check on that flag (`unbound.ReadCheck`), so a trip that reads it unbound raises
eager's `UnboundLocalError` at the user's line when the program runs; after the loop the
result carries the final flag, so reading it where no trip bound it raises too (not where
the loop merely ran, which is what a name every trip binds needs: `unbound.bound_by_loop`).
"""
from __future__ import annotations

import runtime as rt

from . import unbound
from .trace_state import current
from .variables import is_variable


def flagged(first_bound: list, carried: list, state: list, names: tuple) -> list:
    """The indices of the names first bound in the loop whose probe trace read them in a
    branch before binding them, or left them unbound on some path (`trace_state.probe_reads`)."""
    reads = current().probe_reads
    return [i for i in first_bound if i in carried and names[i] in reads and
            is_variable(state[i]) and not state[i].is_array]


def note_probe(names: tuple, probe: list) -> None:
    """After a loop body's probe trace: the names it leaves unbound on some paths (a tensor
    `if` binding them in one branch only gave them a read check)."""
    reads = current().probe_reads
    for name, p in zip(names, probe):
        if unbound.checked([p]):
            reads.add(name)


class LoopBound:
    """The "is bound" flags of the `flagged` names of one graph loop, as extra loop
    variables after all the others."""

    def __init__(self, indices: list, names: tuple, src):
        self.indices, self.names, self.src = indices, names, src

    def start(self) -> list:
        return [rt.full([], False, "bool") for _ in self.indices]

    def split(self, values) -> tuple:
        """(the loop variables without the flags, the flags)."""
        n = len(values) - len(self.indices)
        return list(values[:n]), list(values[n:])

    def enter(self, given: list, flags: list) -> None:
        """The body's names get read checks on their flags."""
        for i, flag in zip(self.indices, flags):
            if is_variable(given[i]):
                given[i].on_read = None  # (the loop variable: its check is this flag's)
                unbound.mark(given[i], flag, self.names[i], self.src)

    def leave(self, out: list) -> list:
        """The flags after a trip (in the body's block): the read check the body left on
        the name (the flag it entered with, where it passed the name on), or true."""
        res = []
        for i in self.indices:
            check = out[i].on_read if is_variable(out[i]) else None
            res.append(check.bound if isinstance(check, unbound.ReadCheck) else rt.full(
                [], True, "bool"))
        return res

    def finish(self, out: list, flags: list) -> None:
        """The loop's results: bound where some trip bound them."""
        for i, flag in zip(self.indices, flags):
            if is_variable(out[i]):
                unbound.mark(out[i], flag, self.names[i], self.src)
