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
from .variables import RunSizedList, Undefined, is_return_value, is_variable, where

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
        self.item_widen: dict = {}  # (index, path) -> dtype: items made tensors of it

    def start(self) -> list:
        """The flags on entry, as extra initial loop variables of the next trace (in the
        block around the loop)."""
        self.order = sorted(self.entry)
        self.tensor_order = sorted(key for key in self.tensors if key not in self.entry)
        return [rt.full([], f, "bool") if isinstance(f, bool) else f
                for key in self.order for f in self.entry[key]] + [
                    x if is_variable(x) else rt.full([], x, dtype)
                    for key in self.tensor_order
                    for x, dtype in zip(self.tensors[key][:2], ("bool", self.tensors[key][2]))]

    def made_tensors(self, numbers: dict, state: list) -> None:
        """Python numbers (`numbers`: index -> the number before the loop) whose initial
        value is a 0-d tensor (the body makes them one), and values that are a number on
        some runs only (`Variable.number_when`): their flag and number are carried."""
        for i, v in numbers.items():
            if is_variable(state[i]) and not state[i].shape and not getattr(
                    state[i], "python_scalar", False) and number_dtype(v) is not None:
                self.tensors[(i, ())] = (True, v, number_dtype(v))
        for i, v in enumerate(state):
            for path, leaf, _ in pairs(v, v, ()):
                if is_variable(leaf) and leaf.number_when is not None and \
                        (i, path) not in self.tensors:
                    self.tensors[(i, path)] = (leaf.number_when, leaf.number_value,
                                               leaf.number_value.dtype.name)

    def made_numbers(self, carried: list, values: list, out: list, names, src) -> bool:
        """Whether the body makes a carried 0-d tensor a Python number (`b = 0.25`,
        `b = float(t)`; on some runs only: a number under a tensor `if`), for one not flagged
        yet (recorded: a tensor on entry), also an item of a carried tuple or list (`return
        h, num` inside the loop: the returned tuple is carried)."""
        new = False
        for k, i in enumerate(carried):
            for path, before, after in item_pairs(values[k], out[i]):
                if (i, path) in self.tensors or not is_variable(before) or before.shape or \
                        before.is_array or before.python_scalar or \
                        before.number_when is not None or number_dtype(after) is None:
                    continue
                self.tensors[(i, path)] = (False, 1, number_dtype(after))
                new = True
        return new

    def became_tensors(self, carried: list, values: list, out: list, state: list,
                       widen: dict) -> bool:
        """Whether the body makes a carried graph value standing for a Python number (`num =
        float(t)` before the loop) a 0-d tensor, for one not flagged yet (recorded: the
        number on entry; the loop carries the tensor's dtype, `widen`), also an item of a
        carried tuple or list (`return h, gain` in the loop: `self.item_widen`)."""
        new = False
        for k, i in enumerate(carried):
            for path, before, after in item_pairs(values[k], out[i]):
                entry = item_at(state[i], path)
                if (i, path) in self.tensors or not is_variable(before) or not is_variable(
                        after) or number_dtype(before) is None or not is_variable(entry) or \
                        after.python_scalar or after.is_array or after.shape or \
                        number_dtype(entry) is None or after.number_when is not None and \
                        number_dtype(after) != number_dtype(entry):
                    continue  # (a number on some runs of an inner loop or `if`: of its type)
                self.tensors[(i, path)] = (True, entry, number_dtype(entry))
                if after.dtype != before.dtype:
                    if path:
                        self.item_widen[(i, path)] = after.dtype
                    else:
                        widen[i] = after.dtype
                new = True
        return new

    def widen_items(self, state: list) -> None:
        """The carried tuples' and lists' items recorded by `became_tensors`, as tensors of
        the body's dtype (in the block around the loop, before it is traced again)."""
        for (i, path), dtype in self.item_widen.items():
            v = item_at(state[i], path)
            if is_variable(v) and v.dtype != dtype:
                state[i] = replaced(state[i], path, rt.cast(v, dtype))
        self.item_widen.clear()

    def cast_numbers(self, carried: list, values: list, out: list) -> None:
        """The body's Python numbers for carried values that are tensors on some runs, as
        the tensor's dtype (their own values are carried beside them, `leave`)."""
        for k, i in enumerate(carried):
            for path in [p for j, p in self.tensors if j == i]:
                before, after = item_at(values[k], path), item_at(out[i], path)
                if is_variable(before) and number_dtype(after) and \
                        not (is_variable(after) and after.number_when is not None):
                    dtype = before.dtype.name
                    out[i] = replaced(out[i], path, rt.cast(after, dtype) if is_variable(
                        after) else rt.full([], after, dtype))

    def widened(self, numbers: dict, state: list) -> None:
        """Python numbers of the state (`numbers`: index -> the number before the loop) that
        the loop's initial values hold as a wider number, the body making them one."""
        for i, v in numbers.items():
            if is_variable(state[i]) and not state[i].shape and \
                    0 <= number_rank(state[i]) != number_rank(v) >= 0:
                self.entry[(i, ())] = (isinstance(v, bool), isinstance(v, float))

    def found(self, carried: list, values: list, out: list, state: list) -> bool:
        """Whether the body gives a carried Python number another type than it got, or one
        whose type the run decides, for a number not flagged yet (recorded: its flags on
        entry), also an item of a carried tuple or list (`return h, sum(kept)` in the loop)."""
        new = False
        for k, i in enumerate(carried):
            for path, before, after in item_pairs(values[k], out[i]):
                if (i, path) in self.entry or min(number_rank(before), number_rank(
                        after)) < 0 or isinstance(after, Undefined):
                    continue
                kinds = {_kind(before), _kind(after)}
                if len(kinds) > 1 or "run" in kinds:
                    self.entry[(i, path)] = _entry_flags(item_at(state[i], path))
                    new = True
        return new

    def enter(self, values: tuple, carried: list) -> list:
        """The loop variables without the flags; the carried numbers get theirs."""
        return self._attach(values, carried)

    def leave(self, out: list) -> list:
        """The body's flags of the numbers (in the body's block), as extra results."""
        return [f(item_at(out[i], path)) for i, path in self.order
                for f in (bool_flag_here, float_flag_here)] + [
            here(kind, item_at(out[i], path), self.tensors[(i, path)][2])
            for i, path in self.tensor_order for kind in "nv"]

    def finish(self, result: list, carried: list) -> list:
        """The op's results without the flags; the carried numbers get theirs."""
        return self._attach(result, carried)

    def _attach(self, values, carried: list) -> list:
        n = len(values) - 2 * len(self.order) - 2 * len(self.tensor_order)
        values, flags = list(values[:n]), values[n:]
        for j, (i, path) in enumerate(self.tensor_order):
            v = item_at(values[carried.index(i)], path)
            if is_variable(v):
                at = 2 * len(self.order) + 2 * j
                v.number_when, v.number_value = flags[at], flags[at + 1]
                v.number_value.python_scalar = True
        for j, (i, path) in enumerate(self.order):
            v = item_at(values[carried.index(i)], path)
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


def item_pairs(a, b):
    """`pairs` of two carried values: the values themselves, or the items of plain tuples and
    lists (also namedtuples; not a list of structures held as arrays, `StructArray`)."""
    if isinstance(a, RunSizedList) or isinstance(b, RunSizedList) or not (
            type(a) in (tuple, list) or isinstance(a, tuple) and hasattr(a, "_fields")):
        return [((), a, b)]
    return [(p, x, y) for p, x, y in pairs(a, b, ()) if not any(
        isinstance(item_at(a, p[:j]), RunSizedList) for j in range(len(p)))]


def item_at(v, path: tuple):
    """The item of the tuples and lists `v` at `path` (`v` where it holds none: a
    placeholder)."""
    for k in path:
        if not isinstance(v, (list, tuple)) or k >= len(v):
            return v
        v = v[k]
    return v


def replaced(v, path: tuple, new):
    """`v` with its item at `path` (of tuples and lists) replaced by `new`."""
    if not path:
        return new
    items = list(v)
    items[path[0]] = replaced(items[path[0]], path[1:], new)
    return items if type(v) is list else tuple(items) if type(v) is tuple else type(v)(*items)


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
