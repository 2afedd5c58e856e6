"""Python numbers that a graph loop carries as one type on some trips and another on others
(`best = False` before the loop, `best = i` in its body, maybe under a tensor `if`; `total =
0`, then `total = total + 0.5`): the loop holds the widest number and carries, as two more loop
variables, the bools saying whether the number is a bool and whether it is a float
(`Variable.bool_when`, `float_when`), so after the loop the call gives eager's type: the
entry's where the loop ran zero times or no trip rebound it, the body's where one did.

`_GraphWhile` (`graph_while.py`) keeps one `LoopNumberKinds`: its body trace finds such
numbers (`found`; the loop is traced again with their flags), each trace strips the flags
from the loop variables and sets them on the numbers (`enter`), returns the body's flags
(`leave`), and after the op the outputs get theirs (`finish`).
"""
from __future__ import annotations

import runtime as rt

from ..errors import ConversionError
from .loop_numpy_values import items
from .number_or_tensor import here, number_dtype, pairs
from .scalar_merge import bool_flag_here, float_flag_here, number_rank
from .variables import Undefined, is_return_value, is_variable, where

_FLAGS = ("bool_when", "float_when")


class LoopNumberKinds:
    """The carried numbers of one graph loop whose types the trips decide."""

    def __init__(self):
        self.entry: dict = {}  # carried state index -> (is a bool, is a float) on entry
        self.order: list = []  # ... of the trace being built (`start`)
        # carried state index -> (is the number, the number) on entry, for a Python number
        # the body makes a 0-d tensor (`number_or_tensor`: the number where no trip ran)
        self.tensors: dict = {}
        self.tensor_order: list = []

    def start(self) -> list:
        """The flags on entry, as extra initial loop variables of the next trace (in the
        block around the loop)."""
        self.order = sorted(self.entry)
        self.tensor_order = sorted(i for i in self.tensors if i not in self.entry)
        return [rt.full([], f, "bool") if isinstance(f, bool) else f
                for i in self.order for f in self.entry[i]] + [
                    x if is_variable(x) else rt.full([], x, dtype)
                    for i in self.tensor_order
                    for x, dtype in zip(self.tensors[i][:2], ("bool", self.tensors[i][2]))]

    def made_tensors(self, numbers: dict, state: list) -> None:
        """Python numbers (`numbers`: index -> the number before the loop) whose initial
        value is a 0-d tensor (the body makes them one), and values that are a number on
        some runs only (`Variable.number_when`): their flag and number are carried."""
        for i, v in numbers.items():
            if is_variable(state[i]) and not state[i].shape and not getattr(
                    state[i], "python_scalar", False) and number_dtype(v) is not None:
                self.tensors[i] = (True, v, number_dtype(v))
        for i, v in enumerate(state):
            if is_variable(v) and v.number_when is not None and i not in self.tensors:
                self.tensors[i] = (v.number_when, v.number_value, v.number_value.dtype.name)

    def made_numbers(self, carried: list, values: list, out: list, names, src) -> bool:
        """Whether the body makes a carried 0-d tensor a Python number (`b = 0.25`,
        `b = float(t)`; on some runs only: a number under a tensor `if`), for one not flagged
        yet (recorded: a tensor on entry). Inside a carried tuple or list, a clear error."""
        new = False
        for k, i in enumerate(carried):
            for path, before, after in pairs(values[k], out[i], ()):
                if i in self.tensors or not is_variable(before) or before.shape or \
                        before.is_array or before.python_scalar or \
                        before.number_when is not None or number_dtype(after) is None:
                    continue
                if path:
                    _refuse_item(names[i], path, src)
                self.tensors[i] = (False, 1, number_dtype(after))
                new = True
        return new

    def became_tensors(self, carried: list, values: list, out: list, state: list,
                       widen: dict) -> bool:
        """Whether the body makes a carried graph value standing for a Python number (`num =
        float(t)` before the loop) a 0-d tensor, for one not flagged yet (recorded: the
        number on entry; the loop carries the tensor's dtype, `widen`)."""
        new = False
        for k, i in enumerate(carried):
            before, after = values[k], out[i]
            if i in self.tensors or not is_variable(before) or not is_variable(after) or \
                    number_dtype(before) is None or not is_variable(state[i]) or \
                    after.python_scalar or after.is_array or after.shape or \
                    number_dtype(state[i]) is None or after.number_when is not None and \
                    number_dtype(after) != number_dtype(state[i]):
                continue  # (a number on some runs of an inner loop or `if`: of its type)
            self.tensors[i] = (True, state[i], number_dtype(state[i]))
            if after.dtype != before.dtype:
                widen[i] = after.dtype
            new = True
        return new

    def cast_numbers(self, carried: list, values: list, out: list) -> None:
        """The body's Python numbers for carried values that are tensors on some runs, as
        the tensor's dtype (their own values are carried beside them, `leave`)."""
        for k, i in enumerate(carried):
            if i in self.tensors and is_variable(values[k]) and number_dtype(out[i]) and \
                    not (is_variable(out[i]) and out[i].number_when is not None):
                dtype = values[k].dtype.name
                out[i] = rt.cast(out[i], dtype) if is_variable(out[i]) else rt.full(
                    [], out[i], dtype)

    def widened(self, numbers: dict, state: list) -> None:
        """Python numbers of the state (`numbers`: index -> the number before the loop) that
        the loop's initial values hold as a wider number, the body making them one."""
        for i, v in numbers.items():
            if is_variable(state[i]) and not state[i].shape and \
                    0 <= number_rank(state[i]) != number_rank(v) >= 0:
                self.entry[i] = (isinstance(v, bool), isinstance(v, float))

    def found(self, carried: list, values: list, out: list, state: list) -> bool:
        """Whether the body gives a carried Python number another type than it got, or one
        whose type the run decides, for a number not flagged yet (recorded: its flags on
        entry)."""
        new = False
        for k, i in enumerate(carried):
            before, after = values[k], out[i]
            if i in self.entry or min(number_rank(before), number_rank(after)) < 0 or \
                    isinstance(after, Undefined):
                continue
            kinds = {_kind(before), _kind(after)}
            if len(kinds) > 1 or "run" in kinds:
                self.entry[i] = _entry_flags(state[i])
                new = True
        return new

    def enter(self, values: tuple, carried: list) -> list:
        """The loop variables without the flags; the carried numbers get theirs."""
        return self._attach(values, carried)

    def leave(self, out: list) -> list:
        """The body's flags of the numbers (in the body's block), as extra results."""
        return [f(out[i]) for i in self.order for f in (bool_flag_here, float_flag_here)] + [
            here(kind, out[i], self.tensors[i][2])
            for i in self.tensor_order for kind in "nv"]

    def finish(self, result: list, carried: list) -> list:
        """The op's results without the flags; the carried numbers get theirs."""
        return self._attach(result, carried)

    def _attach(self, values, carried: list) -> list:
        n = len(values) - 2 * len(self.order) - 2 * len(self.tensor_order)
        values, flags = list(values[:n]), values[n:]
        for j, i in enumerate(self.tensor_order):
            v = values[carried.index(i)]
            if is_variable(v):
                at = 2 * len(self.order) + 2 * j
                v.number_when, v.number_value = flags[at], flags[at + 1]
                v.number_value.python_scalar = True
        for j, i in enumerate(self.order):
            v = values[carried.index(i)]
            if is_variable(v):
                v.bool_when, v.float_when = flags[2 * j], flags[2 * j + 1]
                v.float_type_lost = False  # (carried: `graph_while._lost_float_type`)
        return values


def refuse_items_made_tensors(state: list, carried: list, out: list, names, src) -> None:
    """Refuse an item of a dict, list or tuple the loop carries that is a Python number
    before the loop and a tensor after its body (`stats["total"] += x[i].sum()`): eager code
    has the number after zero trips and the tensor after others, which an item cannot tell
    (a name can: `made_tensors`)."""
    for i in carried:
        for path, before, after in items(state[i], out[i]):
            if path and type(before) in (bool, int, float) and is_variable(after) and not (
                    after.python_scalar or after.shape or after.is_array or
                    after.numpy_array or after.number_when is not None):
                shown = "".join(f"[{k!r}]" for k in path)
                place = (f"the returned value{shown}" if is_return_value(names[i]) else
                         f"'{names[i]}{shown}'")
                raise ConversionError(
                    f"{place} is a Python {type(before).__name__} before a loop whose "
                    f"condition is a tensor ({where(src)}) and a tensor after its body: eager "
                    "code has the number after zero trips and the tensor after others, which "
                    "an item of a carried dict, list or tuple cannot tell. Make it a tensor "
                    "before the loop (`rt.to_tensor(0.0)`), or keep it in a name of its own "
                    "and store it after the loop.", origin=src)


def _refuse_item(name: str, path: tuple, src) -> None:
    item = "".join(f"[{j}]" for j in path)
    place = f"the returned value{item}" if is_return_value(name) else f"'{name}{item}'"
    raise ConversionError(
        f"{place} is a tensor before a loop whose condition is a tensor ({where(src)}) and a "
        "Python number after its body: eager code has the number after the trips that set it "
        "and the tensor where none did, which an item of a carried tuple or list cannot tell. "
        "Make it a tensor in the body (`rt.to_tensor(...)`), or keep it in a name of its "
        "own.", origin=src)


def _kind(v) -> str:
    """A number's type ("b", "i", "f"), or "run" where a flag decides it."""
    if is_variable(v) and (v.bool_when is not None or v.float_when is not None):
        return "run"
    return "bif"[number_rank(v)]


def _entry_flags(v) -> tuple:
    """(is a bool, is a float) for the number `v`, a loop's state on entry: Python bools, or
    the flags of a value whose type the run decides, or its dtype's."""
    if is_variable(v):
        kind = "bif"[number_rank(v)]
        return tuple(getattr(v, flag) if getattr(v, flag) is not None else kind == k
                     for flag, k in zip(_FLAGS, "bf", strict=True))
    return isinstance(v, bool), isinstance(v, float)
