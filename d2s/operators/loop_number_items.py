"""Python-number items of dicts a graph loop carries (a local or argument dict, one held by
an attribute, `self.stats`, and dicts nested in them, `self.state["ema"]["loss"]`; and of
the tuples a plain name holds, `state = (h, 0)`) whose kind the trips decide, as a name's
number's is (`loop_number_kinds`):

- an item that is a Python number before the loop and a 0-d tensor after its body
  (`stats["loss"] += loss`, `stats` a dict of `0.0`s): the loop carries the tensor and, as
  two more loop variables, whether the item is still the number and the number; so after
  zero trips the call gives eager's number, after others the tensor (`Variable.number_when`);
- an item the body gives another Python type (`d["n"] = 0`, then `d["n"] += 0.5` or
  `+= t.item()`): the loop carries the widest number and, as two more loop variables,
  whether it is a bool and whether it is a float (`Variable.bool_when`, `float_when`), so the
  call gives the entry's type after zero trips and the body's after others.

An item is found by its place: (the state index, the path of keys). Its extra loop variables
follow `LoopNumberKinds`' (`_GraphWhile` strips them first)."""
from __future__ import annotations

import runtime as rt

from .block_values import mark_python_number
from .loop_number_kinds import item_pairs, replaced
from .number_or_tensor import here, number_dtype
from .scalar_merge import bool_flag_here, float_flag_here, number_rank
from .variables import Undefined, is_variable

_NUMBERS = (bool, int, float)
_WIDE = ("bool", "int64", "float64")


def number_leaves(v, path=()):
    """(path, item) of the items of `v` (a dict, and dicts nested in it) that are not dicts."""
    if type(v) is dict:
        for k, x in v.items():
            yield from number_leaves(x, path + (k,))
    elif path:
        yield path, v


def at(v, path, default=None):
    """The item of `v` at `path`: keys of dicts, indices of the tuples and lists a graph loop
    carries (`state = (h, 0)`)."""
    for k in path:
        if type(v) is dict:
            if k not in v:
                return default
        elif not isinstance(v, (list, tuple)) or k >= len(v):
            return default
        v = v[k]
    return v


def put(v, path, value, copy=False):
    """`v` with `value` at `path` (its dicts copied along the path where `copy`; tuples are
    always new ones)."""
    if type(v) is not dict:
        return replaced(v, path, value)
    out = dict(v) if copy else v
    if len(path) == 1:
        out[path[0]] = value
    else:
        out[path[0]] = put(out[path[0]], path[1:], value, copy)
    return out


def _tensors_made(before, after, name: str) -> list:
    """(path, the number on entry, the body's value) of the items the body may make tensors:
    of dicts, and of plain tuples and lists a plain name holds (not an attribute's, which is
    written back as the attribute's state and keeps refusing it at the loop)."""
    if type(before) is dict and type(after) is dict:
        return [(path, x, at(after, path, x)) for path, x in number_leaves(before)]
    if isinstance(before, tuple) and type(before) is type(after) and "." not in name:
        return [(p, x, v) for p, x, v in item_pairs(before, after) if p]
    return []


class LoopNumberItems:
    """The Python-number items of one graph loop's carried dicts whose kind the trips
    decide."""

    def __init__(self):
        # (state index, path) -> (the number on entry, its dtype, the tensor's dtype)
        self.items: dict = {}
        # (state index, path) -> (is a bool, is a float) on entry, and the carried dtype
        self.kinds: dict = {}
        self.widen_kinds: dict = {}  # (state index, path) -> the wider dtype to trace again
        # an object the body changes through other names (`Loop.slots`, a helper's
        # `stats["loss"] += loss`, a nested `self.state["ema"]["loss"]`): slot index -> as
        # `items`
        self.slots: dict = {}
        self.slot_kinds: dict = {}  # slot index -> as `kinds` (`widened_slots`)

    def widened(self, original: list, state: list) -> None:
        """After the probe trace (`loop_initial.number_items`): items the loop's initial
        values hold as a wider number than the one the dict held, the body making them one
        (`d["n"] = 0`, then `d["n"] += 0.5`)."""
        for i, (before, now) in enumerate(zip(original, state)):
            if type(before) is not dict or type(now) is not dict:
                continue
            for path, x in number_leaves(before):
                v = at(now, path)
                if type(x) in _NUMBERS and is_variable(v) and v.python_scalar and \
                        not v.shape and number_rank(v) != number_rank(x):
                    self.kinds[(i, path)] = (isinstance(x, bool), isinstance(x, float),
                                             v.dtype.name)

    def found(self, state: list, carried: list, values: list, out: list, names) -> bool:
        """Whether the body makes such an item a tensor, or gives a carried number another
        Python type, for one not recorded yet (then the loop is traced again from a tensor of
        the body's dtype, or from the wider number: `widen`)."""
        new = False
        for k, i in enumerate(carried):
            before, after = state[i], out[i]
            for path, x, v in _tensors_made(before, after, names[i]):
                if (i, path) in self.items or (i, path) in self.kinds:
                    continue
                if type(x) in _NUMBERS and _made_tensor(v):
                    self.items[(i, path)] = (x, number_dtype(x), v.dtype.name)
                    new = True
                elif type(before) is dict and _python_number(x) and (
                        _kind_changed(x, v) or _flagged(x)):
                    given = at(values[k], path)
                    self.kinds[(i, path)] = _entry_kind(x) + (_wider(given, v),)
                    self.widen_kinds[(i, path)] = self.kinds[(i, path)][2]
                    new = True
        return new

    def found_in_slots(self, initial: list, res: list) -> bool:
        """As `found`, for the places the body changes through other names (`initial`: their
        values on entry, `res`: the body's)."""
        new = False
        for j, (x, v) in enumerate(zip(initial, res)):
            if type(x) in _NUMBERS and _made_tensor(v) and j not in self.slots:
                self.slots[j] = (x, number_dtype(x), v.dtype.name)
                new = True
        return new

    def widened_slots(self, numbers: dict, initial: list) -> None:
        """Places the body changes through other names whose Python number it gives another
        type (`numbers`: slot index -> the number on entry; `initial`: the loop's values,
        the wider number)."""
        for j, x in numbers.items():
            self.slot_kinds[j] = _entry_kind(x) + (initial[j].dtype.name,)

    def widen_slots(self, initial: list) -> None:
        for j, (number, _, dtype) in self.slots.items():
            if not is_variable(initial[j]):
                initial[j] = rt.full([], number, dtype)

    def widen(self, state: list) -> None:
        """After `found` (in the block around the loop): the loop's initial values hold the
        recorded items as tensors of the body's dtype, or as the wider number."""
        for (i, path), (number, _, dtype) in self.items.items():
            if not is_variable(at(state[i], path)):
                state[i] = put(state[i], path, rt.full([], number, dtype), copy=True)
        for (i, path), dtype in self.widen_kinds.items():
            v = at(state[i], path)
            wide = rt.cast(v, dtype) if is_variable(v) else rt.full([], v, dtype)
            state[i] = put(state[i], path, mark_python_number(wide), copy=True)
        self.widen_kinds.clear()

    def start(self) -> list:
        return [v for number, dtype, _ in self.items.values()
                for v in (rt.full([], True, "bool"), rt.full([], number, dtype))] + [
                    _flag(f) for is_bool, is_float, _ in self.kinds.values()
                    for f in (is_bool, is_float)] + [
                        v for number, dtype, _ in self.slots.values()
                        for v in (rt.full([], True, "bool"), rt.full([], number, dtype))] + [
                            _flag(f) for is_bool, is_float, _ in self.slot_kinds.values()
                            for f in (is_bool, is_float)]

    def enter(self, values, carried: list) -> list:
        """The loop variables without the items' flags; the items get theirs."""
        n = len(values) - 2 * (len(self.items) + len(self.kinds) + len(self.slots) +
                               len(self.slot_kinds))
        values, flags = list(values[:n]), values[n:]
        start = 2 * (len(self.items) + len(self.kinds))
        for j, k in enumerate(self.slots):
            v = values[len(carried) + k]
            if is_variable(v):
                v.number_when, v.number_value = flags[start + 2 * j], flags[start + 2 * j + 1]
                v.number_value.python_scalar = True
        start += 2 * len(self.slots)
        for j, k in enumerate(self.slot_kinds):
            v = values[len(carried) + k]
            if is_variable(v):
                v.bool_when, v.float_when = flags[start + 2 * j], flags[start + 2 * j + 1]
                v.float_type_lost, v.python_scalar = False, True
        for j, (i, path) in enumerate(self.items):
            v = at(values[carried.index(i)], path)
            if is_variable(v):
                v.number_when, v.number_value = flags[2 * j], flags[2 * j + 1]
                v.number_value.python_scalar = True
        flags = flags[2 * len(self.items):]
        for j, (i, path) in enumerate(self.kinds):
            v = at(values[carried.index(i)], path)
            if is_variable(v):
                v.bool_when, v.float_when = flags[2 * j], flags[2 * j + 1]
                v.float_type_lost = False
        return values

    def leave(self, out: list) -> list:
        """The body's flags and numbers of the items, as extra results; an item the body
        made a Python number again (`stats["loss"] = 0.0`) as the loop's tensor, and a
        number of another type as the carried number's dtype."""
        extra = [here(kind, at(out[i], path), dtype)
                 for (i, path), (_, dtype, _) in self.items.items() for kind in "nv"]
        extra += [f(at(out[i], path)) for i, path in self.kinds
                  for f in (bool_flag_here, float_flag_here)]
        for (i, path), (_, _, tensor_dtype) in self.items.items():
            v = at(out[i], path)
            if not is_variable(v):
                out[i] = put(out[i], path, rt.full([], v, tensor_dtype))
        for (i, path), (_, _, dtype) in self.kinds.items():
            put(out[i], path, _as_carried(at(out[i], path), dtype))
        return extra


    def leave_slots(self, res: list) -> list:
        """As `leave`, for the places the body changes through other names (`res`: their
        values after the body, changed in place)."""
        extra = [here(kind, res[j], dtype) for j, (_, dtype, _) in self.slots.items()
                 for kind in "nv"]
        for j, (_, _, tensor_dtype) in self.slots.items():
            if not is_variable(res[j]):
                res[j] = rt.full([], res[j], tensor_dtype)
        extra += [f(res[j]) for j in self.slot_kinds for f in (bool_flag_here, float_flag_here)]
        for j, (_, _, dtype) in self.slot_kinds.items():
            res[j] = _as_carried(res[j], dtype)
        return extra


def _as_carried(v, dtype: str):
    """The body's number `v` as the loop carries it (the wider number's dtype)."""
    if is_variable(v) and v.dtype.name == dtype:
        return v
    return mark_python_number(rt.cast(v, dtype) if is_variable(v) else rt.full([], v, dtype))


def _made_tensor(v) -> bool:
    """A 0-d tensor (on every run, or on those a tensor `if` in the body decides)."""
    return is_variable(v) and not (v.python_scalar or v.shape or v.is_array or v.numpy_array)


def _python_number(v) -> bool:
    """A Python number, or a graph value standing for one on every run."""
    return type(v) in _NUMBERS or is_variable(v) and v.python_scalar and not v.shape and \
        v.number_when is None and not v.is_array


def _kind_changed(before, after) -> bool:
    """Whether the body leaves a number of another Python type than it got, or one whose
    type the run decides."""
    if isinstance(after, Undefined) or number_rank(after) < 0 or not _python_number(after):
        return False
    if is_variable(after) and (after.bool_when is not None or after.float_when is not None):
        return True
    return number_rank(after) != number_rank(before)


def _flagged(v) -> bool:
    """A graph value standing for a number whose type the run decides (a tensor `if` before
    the loop made it an int on some paths and a float on others)."""
    return is_variable(v) and (v.bool_when is not None or v.float_when is not None)


def _entry_kind(v) -> tuple:
    """(is a bool, is a float) on entry: Python bools, or the run's flags (graph values)."""
    if is_variable(v):
        return (v.bool_when if v.bool_when is not None else v.dtype.name == "bool",
                v.float_when if v.float_when is not None else v.dtype.kind == "f")
    return isinstance(v, bool), isinstance(v, float)


def _flag(f):
    return rt.full([], f, "bool") if isinstance(f, bool) else f


def _wider(a, b) -> str:
    return _WIDE[max(max(number_rank(a), 0), number_rank(b))]
