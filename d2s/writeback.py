"""Write-back: after a converted call nothing the user can reach holds a static `Variable`.

Tracing runs the user's Python code with graph values, so an attribute set on `self` or on an
object passed in (`self.cache = h`, `o.t = x`), a closure cell (`nonlocal acc`), a module
global or a container the function can reach (`log.append(v)`) may be left holding a
`Variable` of the program being built. Eager code would leave a Tensor there.

`capture(target, args, kwargs, out)` runs right after tracing: it walks what the call can reach
(the function's closure cells and the globals its code names, the bound instance — a Layer
and its sub-layers — and the arguments) and finds every place holding a graph value. Those
values become extra outputs of the program; `apply(result)` runs after each call of the
compiled program and stores the computed Tensors in the same places, so the user's objects
hold what eager code would have left there. A list that became a tensor array at its place
(`held_lists`: `self.hist`, `cache["outs"]`, a closure variable) is an output too: after each
run the place holds the list of Tensors eager code leaves, in the same list object when the
place held it before the call. A value that cannot be an output (a tensor array inside
another structure, a value that exists only inside a `cond`/`while` block) raises
`StateChangeError` naming the place.
"""
from __future__ import annotations

import collections
import dataclasses

import runtime as rt

from . import guards, writeback_order
from .operators import held_lists, key_flags, mutation, trace_state
from .operators.lists import StructArray
from .operators.returned_keys import PresentPlace
from .operators.state_at_raise import value_before
from .operators.traced_keys import traced
from .operators.variables import is_variable
from .writeback_deques import deque_windows
from .writeback_deques import restore as restore_deques
from .writeback_fed import Fed, Renewed, in_place, moved_from, rebinding
from .writeback_items import Items as _Items
from .writeback_items import (
    Moved,
    existing,
    moved,
    moves,
    window_for,
    without_rebuilt,
)
from .writeback_items import into as _into
from .writeback_items import kept_items as _kept


class WithState(tuple):
    """`(out, places, values)`: the function's own result plus the places to write back (a
    Python leaf, kept as a constant by the program cache) and their values (program
    outputs)."""


class Places:
    """The slots to write back (not a list, so the program cache keeps it as one leaf)."""

    __slots__ = ("slots", "types")

    def __init__(self, slots, types=None):
        self.slots = slots
        self.types = types or {}  # ident -> the Python type of a number kept as state


def _holds_variable(v, depth=0) -> bool:
    if is_variable(v) or isinstance(v, StructArray):
        return True
    if depth < 6 and type(v) in (list, tuple):
        return any(_holds_variable(x, depth + 1) for x in v)
    if depth < 6 and type(v) is dict:
        return any(_holds_variable(x, depth + 1) for x in v.values())
    return False


def _check(path, v, depth=0):
    if depth == 0 and is_variable(v) and v.is_array and getattr(
            getattr(v, "block", None), "idx", 0) == 0:
        return  # a list that became a tensor array at this place: an output
    if isinstance(v, StructArray):  # a list of tuples / dicts as tensor arrays
        raise mutation.StateChangeError(
            f"{path} holds a list of tuples/dicts that became tensor arrays inside a loop "
            "whose condition is a tensor, and it outlives the call; return it from the "
            "function instead of keeping it there")
    if is_variable(v):
        if v.is_array:
            raise mutation.StateChangeError(
                f"{path} holds a list that became a tensor array inside a loop whose "
                "condition is a tensor, and it outlives the call; return it (or "
                "rt.stack(...) of it) from the function instead of keeping it there")
        blk = getattr(v, "block", None)
        if blk is not None and getattr(blk, "idx", 0) != 0:
            raise mutation.StateChangeError(
                f"{path} was set to a tensor inside an if or loop whose condition is a tensor "
                "in a way d2s could not follow; assign it outside the block, or return the "
                "value from the function")
    elif depth < 6 and type(v) in (list, tuple):
        for i, x in enumerate(v):
            _check(f"{path}[{i}]", x, depth + 1)
    elif depth < 6 and type(v) is dict:
        for k, x in v.items():
            _check(f"{path}[{k!r}]", x, depth + 1)


def _places(target, args, kwargs) -> list:
    return _log(target, args, kwargs).places()


class Before(dict):
    """The Python numbers and eager Tensors reachable before tracing, by place (the program
    reads them as constants or by reference); `.log` is the mutation log of everything
    reachable (`side_effects.py` diffs it after the trace); `.deques` (`writeback_deques`)."""

    log = None
    deques: tuple = ()


def _log(target, args, kwargs, sets=False):
    names = list(target.spec.arg_names)[:len(args)] + list(kwargs)
    values = list(args) + list(kwargs.values())
    names += [f"argument {i + 1}" for i in range(len(names), len(values))]
    return mutation.Log([target.eager], values, names, None, track_variables=False, sets=sets)


def before(target, args, kwargs) -> Before:
    """What is reachable before tracing (see `Before`)."""
    out = Before()
    log = out.log = _log(target, args, kwargs)
    trace_state.current().call_logs.append(log)
    out.deques = tuple((obj, tuple(obj), path) for obj, _, path, _ in log.seen.values()
                       if isinstance(obj, collections.deque))
    for s in log.places():
        v = s.get()
        if s.kind == "list":  # each item is a place
            for i, x in enumerate(v):
                if isinstance(x, rt.Tensor):
                    out[(id(s.obj), "item", i)] = x
        elif isinstance(v, rt.Tensor) or isinstance(v, (int, float)) and not isinstance(v,
                                                                                      bool):
            out[s.ident()] = v
    return out


class Copy:
    """A list, dict or dataclass argument the trace got as a copy holding fed values
    (`copy`), and the caller's own object (`original`), which must see the changes the
    function made (a dataclass's: of its attributes)."""

    __slots__ = ("copy", "original", "start")

    def __init__(self, copy, original):
        self.copy, self.original = copy, original
        self.start = dict(copy) if type(copy) is dict else list(copy) if type(
            copy) is list else _attributes(copy)

    def changed(self) -> list:
        """Slots of the original for the entries the trace changed in the copy."""
        c, start = self.copy, self.start
        if type(c) is not dict and type(c) is not list:
            now = _attributes(c)
            return [(mutation.Slot(self.original, "attr", k, f".{k}"), now.get(k, _NONE))
                    for k in [*now, *(k for k in start if k not in now)]
                    if now.get(k, _NONE) is not start.get(k, _NONE)]
        if type(c) is dict:
            keys = [k for k in [*c, *(k for k in start if k not in c)]  # (in eager's order:
                    if c.get(k, _NONE) is not start.get(k, _NONE)]  # a set's varies by run)
            return [(mutation.Slot(self.original, "dict", k, f"[{k!r}]"), c.get(k, _NONE))
                    for k in keys]
        if len(c) == len(start):
            return [(mutation.Slot(self.original, "dict", i, f"[{i}]"), c[i])
                    for i in range(len(c)) if c[i] is not start[i]]
        return [(mutation.Slot(self.original, "list", None, "a list argument"), list(c))]


_NONE = mutation.MISSING


def _attributes(obj) -> dict:
    own = getattr(obj, "__dict__", None)
    return dict(own) if isinstance(own, dict) else {
        f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _copied(copies, target) -> list:
    """Slots (of the caller's objects) for what the trace changed in argument copies."""
    slots = []
    for cp in copies:
        for slot, value in cp.changed():
            if value is _NONE or not mutation.graph_tree(value):
                what = "a list or dict" if type(cp.copy) in (list, dict) else \
                    f"a {type(cp.copy).__name__}"
                raise mutation.StateChangeError(
                    f"{what} passed to {target.qualname} that holds tensors has its "
                    f"entry {slot.path} changed to a Python value (or removed); a converted "
                    "program keeps such a container's structure. Set tensors in it, or "
                    "return the new value instead.")
            flag = key_flags.flag_for(cp.copy, slot.key, value) if type(cp.copy) is dict \
                else None
            slots.append(_Fixed(slot, value) if flag is None else _present(slot, value, flag))
    return slots


def _present(slot, value, flag) -> PresentPlace:
    """The place of a dict key a tensor `if` or loop set on some paths only; traced with the
    key absent, so a call that finds it set needs another program (a guard)."""
    guards.recorded().append(guards.value_guard(("item", slot.obj, slot.key, slot.path),
                                                guards.MISSING))
    return PresentPlace(slot, value, flag)


class _Fixed:
    """A slot whose value was taken when it was found (its place is another object)."""

    __slots__ = ("slot", "value", "kind", "obj", "path")

    def __init__(self, slot, value):
        self.slot, self.value = slot, value
        self.kind, self.obj, self.path = slot.kind, slot.obj, slot.path

    def get(self):
        return self.value

    def set(self, value):
        self.slot.set(value)

    def ident(self):
        return self.slot.ident()


def capture(target, args, kwargs, out, before: Before, numbers=(), copies=(), rebound=None,
            kept=None, renewed=None):
    """`out`, or `WithState(out, places, values)` when reachable places hold graph values.
    A place that held an eager Tensor before the call and that the call sets to a new tensor
    gets a new Tensor after each call, as eager code rebinds it; where the program reads the
    old one, it reads a tensor of its own fed from the place (`Fed`, appended to `rebound`;
    with `rebound` None, or for a Parameter, the Tensor is kept and the program updates it
    in place; `kept`, a dict, gets such places' idents -> their Tensors; `renewed`, a list,
    gets the places rebound whose old Tensor the program does not read). Python numbers the
    trace changed are `numbers` (fed, written back as numbers), or `side_effects.Promote` is
    raised to trace again with them fed."""
    slots = []
    types = {n.slot.ident(): n.type for n in numbers}
    log = _log(target, args, kwargs, sets=True)  # (sets: only for `_refuse_traced_keys`)
    _refuse_traced_keys(log, target)
    found = deque_windows(before.deques, target, out, log.places(), rebound, renewed)
    read = read_places()
    copied = {id(c.copy) for c in copies}  # (their changes: `_copied`)
    for s in log.places():
        if id(s.obj) in copied:
            continue
        v = s.get()
        if moves(s, v, before.log):  # (`self.prev = self.cur`: the tensor itself, moved)
            slots.append(moved(s, v, log.places(), before.log))
            moved_from(s, before.get(s.ident()), rebound, renewed)
            continue
        if not _holds_variable(v) or s.kind != "list" and type(v) in (list, dict) and (
                value_before(before.log, s) is v or existing(v, before.log, copied)):
            continue  # a list or dict kept (or one that existed, put here: `side_effects`
            # puts it here again) is a place of its own: written back in place
        # (one the call put there, `o.hist = [loss.item()]`: a new one after each call)
        if is_variable(v) and v.number_when is not None:  # (a number on some runs only:
            types.pop(s.ident(), None)  # a tensor on the others, `running.Entry`)
        flag = key_flags.flag_for(s.obj, s.key, v) if s.kind == "dict" else None
        if flag is not None:  # (a key set on some paths only: there after the run or not)
            slots.append(_present(s, v, flag))
            continue
        _check(s.path, v, int(s.kind == "list"))
        tail = appended_tail(s, value_before(before.log, s), v, read)
        held = _Items(s, tail, _kept(tail, before.log, copied)) if tail is not None else \
            window_for(s, v, log, before.log, out, rebound, renewed)
        if held:  # (only appended to; a FIFO of tensors: `Window`)
            slots.append(held)
            continue
        if s.kind == "list" and not _items_updated(s, v, before):
            continue
        old = before.get(s.ident())
        if is_variable(v) and v.none_when is not None and value_before(before.log, s) is None:
            _guard_none(s)  # (None on some runs: the program keeps that None there)
        if isinstance(old, rt.Tensor) and is_variable(v) and v.none_when is None:
            how = rebinding(s, old) if _same_kind(old, v) else "new"
            if how == "fed" and rebound is not None:
                rebound.append(Fed(s, old))  # (and an output, as the other places)
            elif how == "new" and renewed is not None:
                renewed.append(Renewed(s, old))
            elif how == "in place":
                s.set(_update(old, v, s.path))
                if kept is not None:
                    kept[s.ident()] = old
                continue
        if old is not None and not isinstance(old, rt.Tensor) and not (
                is_variable(v) and v.number_when is not None) and s.kind != "dict":  # (a
            raise mutation.StateChangeError(  # loop of no trips; a dict item: guarded)
                f"{s.path} is the Python number {old!r} before the call and the call sets it "
                f"to a tensor (in {target.qualname}); the converted program reads the number "
                f"as a constant, so later calls would start from {old!r} again. Make it a "
                f"tensor before the first call (for example rt.to_tensor({old!r}))")
        own = _kept(v, before.log, copied) if s.kind == "list" else ()
        slots.append(_Items(s, None, own) if any(x is not None for x in own) else _into_origin(
            s, before, v, read))  # (an array of Python numbers comes back
        # as a list of them: `running.Entry.number_lists`)
    slots = writeback_order.places(log, copies) + without_rebuilt(slots) + _copied(
        copies, target) + found  # (the dicts' key orders first: `KeyOrder.set`)
    if not slots:
        return out
    values = [s.get() for s in slots]
    restore_deques(before.deques)  # (their items are written by the first run, as others)
    return WithState((out, Places(slots, types), values))


def _items_updated(s, v: list, before: Before) -> bool:
    """The list at `s`'s items that held eager Tensors before the call and now hold graph
    values (moved: `q.append(t); q.pop(0)`) are updated in place; whether it still holds
    graph values."""
    for i, x in enumerate(v):
        old = before.get((id(s.obj), "item", i))
        if isinstance(old, rt.Tensor) and is_variable(x) and in_place(old) and \
                not any(y is old for y in v):
            s.obj[i] = _update(old, x, f"{s.path}[{i}]")
    return _holds_variable(s.get())


def _guard_none(s) -> None:
    """A place that held None when the call started and that a tensor `if` leaves as it was
    on some runs (`none_or_tensor`): the program gives that None there, so it serves calls
    where the place holds None (a guard; another value traces again)."""
    recorded = guards.recorded()
    place = {"attr": "attr", "dict": "item", "global": "global"}.get(s.kind)
    if recorded is not None and place is not None:
        recorded.append(((place, s.obj, s.key, s.path), "is", None))


def _refuse_traced_keys(log, target) -> None:
    """A dict or set the caller can reach that the trace gave a key (an element) computed by
    the converted code (`o.marks[int(t)] = v`, `o.seen.add(int(t))`): the caller's object
    would keep the trace's graph value, and later calls would not add theirs."""
    for obj, kind, path, _ in log.seen.values():
        if kind in ("dict", "set") and any(traced(k) for k in obj):
            what = "dict key" if kind == "dict" else "set element"
            if kind == "set":  # (the failed trace puts dicts back, not sets)
                obj.difference_update([k for k in obj if traced(k)])
            code = getattr(target.function, "__code__", None)
            at = f' (File "{code.co_filename}", line {code.co_firstlineno})' if code else ""
            raise mutation.StateChangeError(
                f"{target.qualname}{at} uses a value computed by the converted code as a {what} "
                f"of {path}, which outlives the call: the value is known only when the "
                "program runs, and the caller's object would keep the trace's value. Keep "
                "such values in a tensor (a table indexed by the value, rt.unique), or "
                "return them")


def _into_origin(s, before: Before, v, read: set):
    """`s`, or for a place whose list became a tensor array (`held_lists`) while it held the
    same list object before the call, a slot that writes the items into that list: all of
    them, or, where the trace did not read the list's items, only those after the ones it
    held (`list_read`: appended to only, the list guards nothing)."""
    if not (is_variable(v) and v.is_array):
        return s
    lst = held_lists.origin(s)
    if lst is None:
        return s
    old = mutation.Slot(s.obj, s.kind, s.key, s.path)
    log = before.log
    entry = log.seen.get(("globals", id(s.obj)) if s.kind == "global" else id(s.obj))
    snap = entry[3] if entry is not None else None
    held = snap if s.kind == "cell" else snap.get(s.key) if isinstance(snap, dict) else None
    if held is not lst:
        return s
    seen = log.seen.get(id(lst))
    return _Into(old, lst, None if list_read(lst, read) or seen is None else len(seen[3]))


def list_read(lst: list, read: set) -> bool:
    """Whether the trace read the items of `lst` (`read`: `read_places()`)."""
    return ("list", id(lst), None) in read


class _Into:
    """A place whose list became a tensor array and held that list object before the call:
    after each run the items go into that list (aliases of it see them, as in eager code)
    and the place holds it again; with `start`, only the items after the first `start`
    (the list was only appended to)."""

    __slots__ = ("key", "kind", "obj", "path", "slot", "start", "target")

    def __init__(self, slot, target, start=None):
        self.slot, self.target, self.start = slot, target, start
        self.kind, self.obj, self.key, self.path = slot.kind, slot.obj, slot.key, slot.path

    def get(self):
        return self.slot.get()

    def set(self, value):
        if self.start is None:
            self.target[:] = value
        else:  # (the items it held when traced are the program's constants: not again)
            self.target.extend(value[self.start:])
        self.slot.set(self.target)

    def ident(self):
        return self.slot.ident()


def read_places() -> set:
    """The places the running trace's read guards name: (kind, id of the object, key), with
    the key None where the whole object was read (a list's items, a dict's values)."""
    out = set()
    for g in guards.recorded() or ():
        kind, obj = g[0][0], g[0][1]
        kind = _READ_KIND.get(kind, kind)
        out.add((kind, id(obj), None if kind in ("list", "cell") or g[0][0] in _WHOLE
                 else g[0][2]))
    return out


_READ_KIND = {"class": "attr", "index": "list", "values": "item", "whole": "item"}
_WHOLE = ("values", "whole")


def was_read(slot, read: set) -> bool:
    """Whether the trace read the place `slot` (`read`: `read_places()`)."""
    kind = {"dict": "item", "list": "list", "attr": "attr", "global": "global",
            "cell": "cell"}[slot.kind]
    whole = (kind, id(slot.obj), None)
    return whole in read or kind not in ("list", "cell") and (kind, id(slot.obj),
                                                              slot.key) in read


def appended_tail(slot, old, new, read: set):
    """The items a trace appended to the list at `slot` (`old`: its items before the trace,
    `new`: after it), or None where it did more than append or read the list. Only appended
    to, the list guards nothing: after each call its items are appended again, Python ones
    as the trace left them (`side_effects.Appended`), computed ones from the program
    (`_Items`), so one program serves every call whatever the list already holds."""
    if slot.kind != "list" or old is mutation.MISSING or len(new) <= len(old):
        return None
    if was_read(slot, read) or any(a is not b for a, b in zip(old, new)):
        return None
    return list(new[len(old):])


def _update(old, v, path):
    """The eager Tensor `old`, which the program reads, written with `v` by a program op (so
    the next call reads the new value)."""
    if tuple(old.shape) != tuple(v.shape) or old.dtype != v.dtype:
        raise mutation.StateChangeError(
            f"{path} is a tensor of shape {list(old.shape)} ({old.dtype.name}) before the "
            f"call and the call sets it to one of shape {list(v.shape)} ({v.dtype.name}); a "
            "tensor kept on an object must keep its shape and dtype in converted code")
    old.set_value(v)
    return old


def _same_kind(old, v) -> bool:
    """Whether the graph value `v` can be written into the Tensor `old` in place; one of
    another shape or dtype (a buffer rebound to a longer cache) is stored as a new Tensor
    after each call, which the next call's guards see as another tensor."""
    return old.dtype == v.dtype and tuple(old.shape) == tuple(v.shape)


def apply(result):
    """After a call: store the computed values in their places; returns the user's result."""
    if type(result) is not WithState:
        return result
    out, places, values = result
    types = places.types
    taken = {id(s): s.source_value() for s in places.slots if type(s) is Moved}
    for s, v in zip(places.slots, values):
        if taken and id(s) in taken:
            s.set(taken[id(s)])
        elif s.kind == "list":
            _into(s.obj, v)
        elif types and s.ident() in types:
            s.set(_as_number(types[s.ident()], v))
        else:
            s.set(v)
    return out


def _as_number(kind: type, v):
    """A value the program computed for a place that holds a Python number of type `kind`
    in eager code."""
    return v if isinstance(v, (int, float)) else kind(v.item())
