"""Python numbers that a graph loop carries as a bool on some trips and an int or float on
others (`best = False` before the loop, `best = i` in its body, maybe under a tensor `if`):
the loop holds the wider number and carries, as one more loop variable, the bool saying
whether the number is a bool (`Variable.bool_when`), so after the loop the call gives eager's
type: the bool where the loop ran zero times or no trip rebound it, the int where one did.

`_GraphWhile` (`graph_while.py`) keeps one `LoopBoolKinds`: its body trace finds such
numbers (`found`; the loop is traced again with their flags), each trace strips the flags
from the loop variables and sets them on the numbers (`enter`), returns the body's flags
(`leave`), and after the op the outputs get theirs (`finish`).
"""
from __future__ import annotations

import runtime as rt

from .scalar_merge import bool_flag_here, number_rank
from .variables import Undefined, is_variable


class LoopBoolKinds:
    """The carried numbers of one graph loop whose bool-ness the trips decide."""

    def __init__(self):
        self.entry: dict = {}  # carried state index -> the flag on entry (a bool or a Variable)
        self.order: list = []  # ... of the trace being built (`start`)

    def start(self) -> list:
        """The flags on entry, as extra initial loop variables of the next trace (in the
        block around the loop)."""
        self.order = sorted(self.entry)
        return [rt.full([], f, "bool") if isinstance(f, bool) else f
                for f in (self.entry[i] for i in self.order)]

    def found(self, carried: list, values: list, out: list, state: list) -> bool:
        """Whether the body makes a carried Python number a bool where it got another type,
        or the reverse, for a number not flagged yet (recorded: its flag on entry)."""
        new = False
        for k, i in enumerate(carried):
            before, after = values[k], out[i]
            if i in self.entry or min(number_rank(before), number_rank(after)) < 0 or \
                    isinstance(after, Undefined):
                continue
            if {_bool_kind(before), _bool_kind(after)} not in ({"bool"}, {"not"}):
                self.entry[i] = _entry_flag(state[i])
                new = True
        return new

    def widened(self, numbers: dict, state: list) -> None:
        """Python bools of the state (`numbers`: index -> the number before the loop) that
        the loop's initial values hold as a wider number, the body making them one."""
        for i, v in numbers.items():
            if isinstance(v, bool) and is_variable(state[i]) and state[i].dtype.name != "bool":
                self.entry[i] = True

    def enter(self, values: tuple, carried: list) -> list:
        """The loop variables without the flags; the carried numbers get theirs."""
        n = len(values) - len(self.order)
        values, flags = list(values[:n]), values[n:]
        for i, flag in zip(self.order, flags, strict=True):
            v = values[carried.index(i)]
            if is_variable(v):
                v.bool_when = flag
        return values

    def leave(self, out: list) -> list:
        """The body's flags of the numbers (in the body's block), as extra results."""
        return [bool_flag_here(out[i]) for i in self.order]

    def finish(self, result: list, carried: list) -> list:
        """The op's results without the flags; the carried numbers get theirs."""
        n = len(result) - len(self.order)
        result, flags = list(result[:n]), result[n:]
        for i, flag in zip(self.order, flags, strict=True):
            v = result[carried.index(i)]
            if is_variable(v):
                v.bool_when = flag
        return result


def _bool_kind(v) -> str:
    """Whether the number `v` is a bool: "bool", "not", or "bool or not" (a flag says)."""
    if is_variable(v) and v.bool_when is not None:
        return "bool or not"
    return "bool" if number_rank(v) == 0 else "not"


def _entry_flag(v):
    """Whether the number `v` (a loop's state on entry) is a bool: a Python bool, or the
    flag of a value that is one on some paths, or its dtype."""
    if is_variable(v):
        return v.bool_when if v.bool_when is not None else v.dtype.name == "bool"
    return isinstance(v, bool)
