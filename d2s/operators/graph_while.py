"""One `while` op for a loop whose test is a graph value (`graph_while`, which `loops` calls
for `while` and `for` loops alike): Python lists in the state become tensor arrays, names
first bound inside the loop get initial values of the types the body gives them
(`loop_initial`), objects the body changes through other names are extra loop variables
(`mutation_loop.Loop`), and a body that widens a value's dtype is traced again from the wider
dtype. `_GraphWhile` holds what one loop's traces share.
"""
from __future__ import annotations

import copy
import dataclasses
import linecache
import re

import runtime as rt
from runtime.core import is_tensor
from runtime.dtypes import promote
from runtime.program.builder import current_builder

from .. import report
from ..errors import ConversionError
from . import branch_dtypes, loop_bound, loop_errors, loop_numpy_values, mutation
from . import unbound as unbound_mod
from .block_values import (
    as_list,
    copy_container,
    raise_when_run,
    raised_by_user_code,
    refuse_aliased,
    result_of,
)
from .branch_arrays import array_at, array_paths
from .control_flow import ifelse
from .exceptions import branch_frame
from .logical import to_bool
from .loop_initial import (
    EmptyArray,
    EmptyTuple,
    changes_number_items,
    grown_tuple,
    is_empty_array,
    python_items,
    settled_initial_values,
    to_array,
)
from .loop_keys import check_keys, check_values_kept, dict_keys_of, refuse_key_change
from .loop_new_keys import LoopNewKeys, NewKeys, outermost
from .loop_number_items import LoopNumberItems
from .loop_number_kinds import LoopNumberKinds, refuse_items_made_tensors
from .mutation_loop import Loop
from .variables import Undefined, is_return_value, is_variable, marked_returns, user_origin, where


def graph_while(test, body, state: list, names: tuple, unread=()) -> list:
    """One `while` op for state whose test is a graph value (see `_graph_while`). A body that
    raises Python's own IndexError / KeyError whenever it runs (a Python list popped empty:
    its state is the same on every run) is `if test: body`, whose branch raises that error
    when the program runs it, as eager code does on the first iteration. `unread`: names
    whose value on entry neither the test nor the body reads (the body binds them first)."""
    names = marked_returns(names)
    logs: list = []
    try:
        return _graph_while(test, body, list(state), names, logs, unread)
    except LookupError as e:
        if not raised_by_user_code(e):
            raise
        for log in logs:
            log.restore()
        return as_list(ifelse(test(*state), body, _unchanged, tuple(state), names),
                        len(names))


def _unchanged(*state):
    return result_of(list(state))


def _into_dict(original: dict, new: dict) -> dict:
    """The loop's result for a dict its body changed in place, written into the dict the
    name held before the loop, which the name holds again: the caller's object (an argument,
    an attribute's dict) sees the change, as in eager code (`side_effects.py` then makes a
    Python number there program state)."""
    for k, v in new.items():  # (a dict nested in it stays the object an alias holds)
        if type(v) is dict and type(original.get(k)) is dict and v is not original[k]:
            _into_dict(original[k], v)
        else:
            original[k] = v
    return original


def _graph_while(test, body, state: list, names: tuple, logs: list, unread=()) -> list:
    """One `while` op for state whose test is a graph value. State that is not a graph value
    and not a Python number (objects, None, functions) must stay the same object; Python
    lists become tensor arrays; names first bound inside the loop get a zero initial value of
    the shape and dtype the body gives them (found by tracing the body once, discarded)."""
    keys = LoopNewKeys(outermost())  # dict keys the body adds: built again with them (`NewKeys`)
    keys.flagged_on_entry(state)
    while True:
        try:
            return _GraphWhile(test, body, keys.prefilled(state), names, logs, unread,
                               keys).build()
        except NewKeys:
            for log in logs:
                log.restore()



def _refuse_run_decided_type(name, src):
    """A Python number the loop body makes whose type only the run decides (the `sum()` of a
    list of floats that may be empty: eager's int start when it is): the loop carries its
    value, not its type, so converted code would give a float where eager has the int."""
    raise ConversionError(
        f"{_shown(name)} is a Python number made in a loop whose condition is a tensor "
        f"({where(src)}) from sum() of a list that may be empty: eager Python gives the int "
        "start value for an empty list and a float otherwise, and the loop carries the value "
        "but not which type it has. Give sum() a float start, `sum(items, 0.0)`.", src)


def _lost_float_type(v) -> bool:
    """Whether `v`, or a value in the tuples, lists and dicts it holds (`return h, sum(xs)`),
    is a loop output whose Python number type the body's run decided (`float_type_lost`)."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif getattr(x, "float_type_lost", False):
            return True
    return False


def _shown(name):
    return "the returned value" if is_return_value(name) else f"'{name}'"

class _GraphWhile:
    """One graph `while` loop being built (see `_graph_while`): its state, what the traces of
    its test and body found (dtypes to widen, lists that become arrays), and the checks after
    it. (A plain object, not `__slots__`: `aliases` reads d2s's objects' fields.)"""

    def __init__(self, test, body, state: list, names: tuple, logs: list, unread=(),
                 new_keys=None):
        self.test, self.body, self.names = test, body, names
        self.new_keys = new_keys or LoopNewKeys(outermost())
        self.src = src = user_origin()
        self.outer = current_builder().block  # (the block the loop is built in)
        branch_dtypes.refuse_carried(names, state, src)  # (None on some runs)
        self.checks, self.taken = {}, None
        self.log = log = mutation.begin((test, body), state, names, src)  # state by object
        self.body = body = self.new_keys.wrap(body)  # (a tensor `if` in it may add keys)
        logs.append(log)
        _refuse_test_effects(test, state, log, src)  # (so the test can run again: `taken`)
        # names first bound inside the loop: after it, bound only where the body ran
        self.first_bound = [i for i in range(len(names)) if isinstance(state[i], Undefined)]
        self.unset = [v.error if isinstance(v, Undefined) else None for v in state]  # (eager's
        # error reading it after zero trips: an attribute's AttributeError, or None)
        if unbound_mod.checked(state) or self.first_bound:
            self.taken = to_bool(test(*state))  # the test on entry: whether the body runs
        if unbound_mod.checked(state):  # a name bound on some paths only, carried into it:
            self.checks = {i: v.on_read for i, v in enumerate(state)
                           if unbound_mod.checked([v])}
            # read where the body runs (not a value the body binds before reading it)
            unbound_mod.read_if([v for n, v in zip(names, state) if n not in unread],
                                self.taken)
        self.dicts = {i: v for i, v in enumerate(state) if isinstance(v, dict)}
        # (a dict not carried is checked too)
        self.dict_keys = {i: dict_keys_of(v) for i, v in self.dicts.items()}
        self.state = self._arrays_of_lists(state)
        self.numbers: dict = {}  # index -> a Python number the body may turn into a tensor
        self.number_kinds = LoopNumberKinds()  # numbers whose type the trips decide
        self.number_items = LoopNumberItems()  # dict items: a number, or a tensor after trips
        self._initial_values()
        self.number_kinds.made_tensors({}, self.state)  # (a number on some runs only)
        self.carried = [i for i, v in enumerate(self.state) if _carried(v)]
        self.bound = loop_bound.LoopBound(loop_bound.flagged(
            self.first_bound, self.carried, self.state, names), names, src)
        self.loop = Loop(log, body, self.state, self.carried,  # changed objects: loop vars
                         self.new_keys.new_held_key)
        self.new_keys.held_by(self.loop.slots, src)  # (flagged keys among them)
        self.number_items.widened_slots(self.loop.kinds, self.loop.initial)
        if self.loop.numbers and self.taken is None:  # (an attribute's number filling a
            self.taken = to_bool(test(*self.state))  # tensor)
        self.widen: dict = {}
        self.widened: dict = {}  # index -> a tensor's dtype before the body widened it
        self.changed_in_place: set = set()
        self.arrayify: dict = {}  # (state index, path) -> dtype
        self.extra_arrays: dict = {}  # (changed-object index, path) -> dtype

    def _arrays_of_lists(self, state: list) -> list:
        """The state with its Python lists as tensor arrays (but those the body only updates
        in place) and its dicts copied."""
        names, log = self.names, self.log
        fixed = _fixed_lists(self.body, state, names)
        log.scratch_end()
        report.arrays(names, [None if i in fixed else v for i, v in enumerate(state)])
        for i in range(len(names)):  # (no enumerate: its tuple would be one more reference)
            if isinstance(state[i], list) and i not in fixed:
                refuse_aliased(state[i], names[i], "is appended to in a loop whose condition "
                               "is a tensor, so it becomes a tensor array", self.src, log)
        return [to_array(v, names[i], self.src) if isinstance(v, list) and i not in fixed else (
            copy.copy(v) if isinstance(v, dict) else EmptyTuple() if type(v) is tuple and not
            v else loop_numpy_values.carried_scalar(v)) for i, v in enumerate(state)]  # (`()`:
        # `tuple(kept)` in the body; `total = np.float32(0)`: a NumPy scalar the loop carries)

    def _initial_values(self) -> None:
        """Values for names first bound in the body, numbers it makes tensors, lists it fills
        (`loop_initial`)."""
        state, names = self.state, self.names
        if not any(isinstance(v, (Undefined, int, float)) or is_empty_array(v) or (
                v is None and is_return_value(name)) or grown_tuple(v) or
                changes_number_items(v, i in self.dicts) for i, (v, name) in enumerate(
                    zip(state, names))):
            return
        numbers = {i: v for i, v in enumerate(state) if isinstance(v, (int, float))}
        self.state = settled_initial_values(self.body, state, names, self.src, self.log)
        self.number_kinds.widened(numbers, self.state)  # (`best = False`, then `best = i`)
        self.number_kinds.made_tensors(numbers, self.state)  # (`b = 1`, then `b = b + t`)
        self.number_items.widened(state, self.state)  # (`d["n"] = 0`, then `d["n"] += 0.5`)
        # a number filling a tensor of another shape: right only where the body runs
        self.numbers = {i: v for i, v in numbers.items() if is_variable(self.state[i]) and
                        self.state[i].ndim and not getattr(self.state[i], "python_scalar",
                                                           False)}
        if self.numbers and self.taken is None:
            self.taken = to_bool(self.test(*state))

    def _full(self, values):
        merged = list(self.state)
        for i, v in zip(self.carried, values):
            merged[i] = v
        return self.loop.enter(merged, values[len(self.carried):])

    def _graph_test(self, *values):
        values = self.bound.split(values)[0]
        values, flags = self.new_keys.enter(values)
        values = self.number_items.enter(values, self.carried)
        values = self.number_kinds.enter(values, self.carried)
        loop_numpy_values.enter(self.state, self.carried, values)
        given = self._full(values)
        if current_builder().block is not self.outer:  # (not `while_loop`'s probe of it)
            self.new_keys.attach(given, flags, self.src)
        return self.loop.restore(self.test(*given))

    def _graph_body(self, *values):
        carried, names, src = self.carried, self.names, self.src
        values, bound = self.bound.split(values)
        values, flags = self.new_keys.enter(values)
        values = self.number_items.enter(values, carried)
        values = self.number_kinds.enter(values, carried)
        loop_numpy_values.enter(self.state, carried, values)
        keys = [dict_keys_of(v) for v in values]  # (the body may change the dicts in place)
        # (and an inner loop may widen a Variable in place: `Loop.renew`)
        kept = [copy.copy(v) if is_variable(v) else v for v in values]
        given = self._full(values)
        self.new_keys.attach(given, flags, src)
        self.bound.enter(given, bound)
        dicts = {i: dict(given[i]) for i in self.dicts if i in carried and type(given[i]) is dict}
        entry = {i: dict(given[i]) for i in carried if type(given[i]) is dict}
        try:
            out = as_list(self.body(*given), len(names))
        except LookupError as e:
            if not raised_by_user_code(e):
                raise
            # Python's own IndexError / KeyError in the body (a list popped empty): eager
            # code raises it when the body runs, so the program does; the state is unchanged
            raise_when_run(e)
            out = list(given)
        branch_dtypes.refuse_carried(names, out, src)  # (a tensor `if` in it left None)
        loop_numpy_values.check(self.state, carried, out, lambda i: _shown(names[i]), src)
        if self.number_items.found(self.state, carried, values, out, names):
            raise _Widen  # (traced again with the items' flags carried)
        refuse_items_made_tensors(self.state, carried, out, names, src)
        for i, before in entry.items():  # (keys it removes on every path, keys it moves)
            self.new_keys.removed(i, before, out[i])
        for k, i in enumerate(carried):
            self.new_keys.found(i, keys[k], out[i])
            check_keys(names[i], keys[k], out[i], src)
        for i in self.dicts.keys() - set(carried):  # (a dict of no tensors: a key set in it)
            self.new_keys.found(i, self.dict_keys[i], out[i])
            check_keys(names[i], self.dict_keys[i], out[i], src)
            check_values_kept(names[i], self.dicts[i], out[i], src)
        for i, before in dicts.items():  # (changed in place, then rebound: `d = {...}`)
            self.loop.check_dict_kept(names[i], self.dicts[i], given[i], before, out[i])
        self.changed_in_place.clear()  # dicts the body changed, not rebound: the same object
        self.changed_in_place.update(i for i in self.dicts if i in carried and
                                     out[i] is given[i])
        kinds = self.number_kinds
        if kinds.found(carried, values, out, self.state) or kinds.made_numbers(
                carried, values, out, names, src) or kinds.became_tensors(
                    carried, values, out, self.state, self.widen):
            raise _Widen  # (traced again with the number's type flags carried)
        extra = kinds.leave(out) + self.number_items.leave(out)  # (then numbers as their
        # tensors' dtypes)
        kinds.cast_numbers(carried, values, out)
        _check_widening(carried, kept, out, self.widen)
        for k, i in enumerate(carried):  # a list inside the state that the body makes (or
            for path, dtype in array_paths(kept[k], out[i], ()):  # grows into) an array
                if _is_array(_at(kept[k], path)) and isinstance(_at(out[i], path), list):
                    out[i] = array_at(out[i], path, dtype)  # (the state is one already: the
                else:  # list the body binds, `res = [...]`, joins it)
                    self.arrayify[(i, path)] = dtype
        if self.arrayify:
            raise _Widen
        self._refuse_python_changes(out)
        self.new_keys.removed_held(self.loop.slots, self.loop.initial, src)  # (before `leave`)
        held = self.new_keys.held_flags()  # (before `leave` puts the changed objects back)
        res = self.loop.leave([out[i] for i in carried], [self.state[i] for i in carried])
        self._check_objects(kept, res, keys)  # (as given: an append may change one in place)
        nc = len(carried)
        if self.number_items.found_in_slots(self.loop.initial, res[nc:]):
            raise _Widen  # (a helper's `stats["loss"] += loss`: traced again with its flags)
        changed = res[nc:]
        slot_extra = self.number_items.leave_slots(changed)  # (a number again: the tensor)
        res[nc:] = changed
        return res + extra + slot_extra + self.new_keys.leave(out, flags) + held + \
            self.bound.leave(out)

    def _refuse_python_changes(self, out: list) -> None:
        for i, (before, after) in enumerate(zip(self.state, out)):
            if i not in self.carried and after is not before and not (
                    isinstance(after, Undefined) and isinstance(before, Undefined)):
                name, src = self.names[i], self.src
                raise TypeError(
                    f"'{name}' is a Python {type(before).__name__} changed inside a loop "
                    f"whose condition is a tensor ({where(src)}{_assigned(name, src)}); "
                    "only tensors, numbers and lists can change in such a loop")

    def _check_objects(self, values, res: list, keys: list) -> None:
        """The objects the body changed through other names (after the carried state)."""
        nc, src = len(self.carried), self.src
        for j, slot in enumerate(self.loop.slots):
            if slot.kind == "dict" and res[nc + j] is mutation.MISSING:
                refuse_key_change(slot.path[:-len(f"[{slot.key!r}]")], slot.key, src)
            check_keys(slot.path, keys[nc + j], res[nc + j], src)
        for j, slot in enumerate(self.loop.slots):
            for path, dtype in array_paths(values[nc + j], res[nc + j], ()):
                if slot.kind == "list" and not path:
                    raise mutation.StateChangeError(
                        f"the list {slot.path} becomes a tensor array inside a loop whose "
                        f"condition is a tensor ({where(src)}) while the loop changes it "
                        "through another name too; append to it by one name only.", src)
                self.extra_arrays[(j, path)] = dtype
        if self.extra_arrays:
            raise _Widen

    def build(self) -> list:
        """The `while` op (traced again while the body widens a dtype); the new state."""
        carried, loop = self.carried, self.loop
        blocks = current_builder().program.blocks
        for _ in range(2 * len(carried) + 1):
            mark = len(blocks)
            kept = {i: dict(v) for i, v in enumerate(self.state) if type(v) is dict}
            try:
                with branch_frame():  # a `raise` in the body does not end the code around it
                    result = rt.static.nn.while_loop(
                        self._graph_test, self._graph_body,
                        loop.initial_state(carried) + loop.initial + self.number_kinds.start()
                        + self.number_items.start() + self.new_keys.start()
                        + self.bound.start())
                result, bound = self.bound.split(result)
                result, flags = self.new_keys.enter(result)
                result = self.number_items.enter(result, carried)
                out = self._finish(self.number_kinds.finish(result, carried), bound)
                self.new_keys.finish(out, flags, self.src)
                return out
            except Exception as e:
                self.log.restore()  # the user's objects must not keep discarded blocks' values
                if isinstance(e, NewKeys):
                    del blocks[mark:]
                    raise
                if not isinstance(e, _Widen):
                    told = loop_errors.named(
                        e, loop.initial_state(carried) + loop.initial,
                        [self.names[i] for i in carried] + [s.path for s in loop.slots],
                        self.src)
                    if told is not None:
                        raise told from None
                    raise
                del blocks[mark:]
                for i, items in kept.items():  # (a dict the trace stored in: a copy of
                    self.state[i].clear()  # the caller's, which the log does not undo)
                    self.state[i].update(items)
                self._widen_state()
        raise AssertionError("d2s bug: loop state kept widening")

    def _finish(self, result, bound) -> list:
        state, carried, names, taken, src = (self.state, self.carried, self.names,
                                             self.taken, self.src)
        out = list(state)
        loop_numpy_values.finish(state, carried, result)
        for i, v in zip(carried, result):
            out[i] = v
            if _lost_float_type(v):
                _refuse_run_decided_type(names[i], src)
            if getattr(state[i], "_d2s_tuple", False):  # (`()`, then `tuple(kept)`)
                v._d2s_tuple = True
            if getattr(state[i], "python_items", False):
                python_items(v)
                v.mixed_numbers = getattr(v, "mixed_numbers", False) or getattr(
                    state[i], "mixed_numbers", False)
                for mark in ("keeps_float", "float_if_filled"):
                    setattr(v, mark, getattr(v, mark, False) and getattr(state[i], mark, False))
        unbound_mod.after_loop(self.checks, out, taken)
        self.bound.finish(out, bound)  # (bound where a trip bound it; the others: where
        unbound_mod.bound_by_loop(self.first_bound, names, out, taken, src, self.unset)  # it ran)
        unbound_mod.tensor_by_loop(self.numbers, names, out, taken, src)
        unbound_mod.dtype_by_loop(self.widened, names, out, taken, src)
        loop = self.loop
        unbound_mod.tensor_by_loop({j: v for j, v in loop.numbers.items() if loop.initial[
            j].ndim}, [s.path for s in loop.slots], list(result[len(carried):]), taken, src)
        out = self.loop.finish(out, result[len(carried):])
        for i in self.changed_in_place:  # (`stats["n"] += 1` on a dict passed in)
            out[i] = _into_dict(self.dicts[i], out[i])
        for i in self.dicts.keys() - set(carried):  # (the body left it as it was: the
            out[i] = self.dicts[i]  # name holds the same object, which aliases see)
        return out

    def _widen_state(self) -> None:
        """The body widens a carried value's dtype (int32 -> int64, int -> float), as
        Python's first iteration would: widen it before the loop, to trace again. (The failed
        trace's changes to the user's objects, and Variables it retargeted, were undone: they
        name values of the discarded blocks.)"""
        state, widen = self.state, self.widen
        self.number_items.widen(state)
        self.number_items.widen_slots(self.loop.initial)
        self.number_kinds.widen_items(state)
        if self.taken is None and any(is_tensor(state[i]) or is_variable(state[i]) and not
                                      state[i].python_scalar for i in widen):
            self.taken = to_bool(self.test(*state))  # (the test on entry, the old dtypes)
        for i, dtype in widen.items():
            v = state[i]
            if (is_variable(v) and not v.python_scalar or is_tensor(v)) and \
                    i not in self.widened and (i, ()) not in self.number_kinds.tensors:
                self.widened[i] = v.dtype  # eager's dtype where the body never runs
            state[i] = rt.cast(v, dtype) if is_variable(v) or is_tensor(v) else rt.full(
                [], v, dtype)
        for (i, path), dtype in self.arrayify.items():
            new = array_at(state[i], path, dtype)
            if not path and i in self.loop.aliases and is_variable(state[i]):
                self.loop.renew(state[i], new)  # (the object the body changes in place)
            else:
                state[i] = new
        for (j, path), dtype in self.extra_arrays.items():
            self.loop.initial[j] = array_at(self.loop.initial[j], path, dtype)
        widen.clear()
        self.arrayify.clear()
        self.extra_arrays.clear()


def _at(v, path):
    """The value at `path` (keys into nested tuples, lists, dicts) in `v`; None if none."""
    for key in path:
        if isinstance(v, dict) and key in v or isinstance(v, (list, tuple)) and isinstance(
                key, int) and key < len(v):
            v = v[key]
        else:
            return None
    return v


def _is_array(v) -> bool:
    return is_variable(v) and v.is_array


def _refuse_test_effects(test, state: list, log, src) -> None:
    """The loop's condition traced once in a scratch block: eager code runs its Python
    effects (`self.log.append(...)`, a counter on an object) each time it tests it, which the
    `while` op's condition block cannot do (its only output is the truth value)."""
    with current_builder().scratch():
        test(*state)
    new = log.changed()
    log.restore()
    if new:
        raise mutation.StateChangeError(
            f"{new[0].path} is changed by the condition of a loop whose condition is a tensor "
            f"({where(src)}): eager code changes it each time it tests the condition, and the "
            "program's loop condition can only compute its truth value. Change it in the loop "
            "body (or before the loop) instead.", src)


class _Widen(Exception):
    """A loop body returned a carried value in a wider dtype than it received."""


def _check_widening(carried, values, out, widen: dict) -> None:
    for k, i in enumerate(carried):
        before, after = values[k], out[i]
        if not (is_variable(before) and (is_variable(after) or is_tensor(after))) or \
                before.is_array:  # (an array of numbers held as pairs: `array_paths`)
            continue
        if after.dtype != before.dtype and promote(before.dtype, after.dtype) == after.dtype:
            widen[i] = after.dtype
    if widen:
        raise _Widen


def _fixed_lists(body, state: list, names: tuple) -> set:
    """Indices of Python lists in the state that the body only updates in place (same length,
    tensors and numbers): they are carried element by element instead of becoming tensor
    arrays, so `xs[0] = xs[0] + xs[1]` keeps working. Found by tracing the body once in a
    scratch block."""
    lists = [i for i, v in enumerate(state) if isinstance(v, list) and v and all(
        _carried(x) for x in v)]
    if not lists:
        return set()
    b = current_builder()
    try:
        with b.scratch():
            out = as_list(body(*[copy_container(v) for v in state]), len(names))
    except Exception:  # noqa: BLE001  (then they are arrays, as before; the real trace reports)
        return set()
    return {i for i in lists if isinstance(out[i], list) and len(out[i]) == len(state[i])
            and all(_carried(x) for x in out[i])}


def _carried(v, inner: bool = False) -> bool:
    """Loop state the while op carries: tensors, numbers, and lists/tuples/dicts of those
    (inside one, also an empty list, tuple or dict: a returned `(h, [])`)."""
    if isinstance(v, dict):
        return bool(v) and all(_carried(x, True) for x in v.values()) or inner and not v
    if isinstance(v, (tuple, list)) and not isinstance(v, EmptyArray):
        return bool(v) and all(_carried(x, True) for x in v) or inner and not v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):  # (as a namedtuple)
        return all(_carried(getattr(v, f.name), True) for f in dataclasses.fields(v))
    return is_variable(v) or is_tensor(v) or isinstance(v, (int, float, bool))


def _assigned(name: str, src) -> str:
    """`; assigned at line N: <code>` for the first assignment to `name` in the loop's body
    (the lines after the loop's header that are indented deeper), or ''."""
    if src is None:
        return ""
    header = linecache.getline(src.filename, src.lineno)
    indent = len(header) - len(header.lstrip())
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*(?:[-+*/%@&|^]|//|\*\*|>>|<<)?=(?!=)")
    n = src.lineno + 1
    while True:
        line = linecache.getline(src.filename, n)
        if not line:
            return ""
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            return ""  # past the loop's body
        if pattern.match(line):
            return f"; assigned at line {n}: {line.strip()}"
        n += 1
