"""List places written back item by item (`writeback.py`): the items a program computes go
into the list object itself, and lists or dicts that existed before the call, which the call
stored there (`self.log.append(metrics)` where `metrics` holds a value the program computes),
go there as themselves, as eager code leaves them, never as rebuilt copies."""
from __future__ import annotations

from runtime import pytree
from runtime.program.builder import current_builder
from runtime.tensor import Tensor

from . import guards
from .operators.state_at_raise import value_before
from .operators.variables import is_variable


def existing(v, log, copied=()) -> bool:
    """Whether `v` is a list or dict the call could reach before it ran (not the trace's
    copy of an argument, `copied`: ids): stored in another place, the place gets that very
    object after each call, as eager code leaves it, and its items are its own places."""
    if type(v) is not list and type(v) is not dict or id(v) in copied:
        return False
    found = log.seen.get(id(v))
    return found is not None and found[0] is v


class Items:
    """A list place whose new items the program outputs: after each run they are appended
    to the list (with `tail`: the trace only appended them, some computed) or they replace
    its items; `kept`: per item, a list or dict that existed before the call, put there as
    itself, as eager code leaves it (its own items are written back where it is), else None."""

    __slots__ = ("kept", "kind", "obj", "path", "slot", "tail")

    def __init__(self, slot, tail, kept):
        self.slot, self.tail, self.kept = slot, tail, kept
        self.kind = "append" if tail is not None else "items"
        self.obj, self.path = slot.obj, slot.path

    def get(self):
        return self.tail if self.tail is not None else self.slot.get()

    def set(self, value):
        value = [v if k is None else k for v, k in zip(value, self.kept, strict=True)]
        if self.tail is not None:
            self.obj.extend(value)
        else:
            into(self.obj, value)

    def ident(self):
        return self.slot.ident()


def kept_items(items, log, copied) -> list:
    """Per item, the item where it is a list or dict that `existing` finds, else None."""
    return [x if existing(x, log, copied) else None for x in items]


def into(old: list, new: list) -> None:
    """Write a list's new items into the list itself, keeping the identity of the lists and
    dicts in it (they are places of their own, which every alias of them sees)."""
    if len(old) != len(new):
        old[:] = new
        return
    for i, (a, b) in enumerate(zip(old, new)):
        if type(a) is type(b) and type(a) in (list, dict):
            continue
        old[i] = b


# ---- windows: lists of tensors the call keeps, moves and drops ----------------------------

class Window(Items):
    """A list of eager tensors the call keeps, moves or drops, adding ones the program
    computes: a list place (`self.buf`, a FIFO: `self.buf.append(h)`, then `self.buf.pop(0)`
    past a length), or a place the call rebinds to a list it builds from the one it held
    (`rebuilt`: `self.buf = self.buf[-2:] + [h]`). The program does not capture those
    tensors: it reads each one it uses from the list's item when it runs (`FedItem`), and the
    list is guarded by its length and its tensors' kinds (`guards.Like`), not by
    which tensors it holds, so one program serves every call at a steady length. After each
    run the list holds, per item, the tensor that was at index `moved[j]` when the call
    started (the same object, as eager code moves it) or the next tensor the program
    computed; a rebuilt one is a new list, as eager's."""

    __slots__ = ("like", "moved", "rebuilt")

    def __init__(self, slot, moved, like, rebuilt=None):
        super().__init__(slot, None, [None] * moved.count(None))
        self.moved = moved  # per item after the call: its index when the call started, or None
        self.like = like  # id of each tensor found -> (shape, dtype, stop_gradient)
        self.rebuilt = rebuilt  # (the list the place held when the trace started)

    def get(self):
        return [v for v, m in zip(self.slot.get(), self.moved) if m is None]

    def set(self, value):
        found, computed = self.slot.get(), iter(value)
        new = [found[m] if m is not None else next(computed) for m in self.moved]
        if self.rebuilt is None and type(self.obj) is list:  # (a deque: `writeback_deques`)
            into(self.obj, new)
        else:
            self.slot.set(new)


class FedItem:
    """A tensor of a `Window` that the program reads: the program reads `private`, which
    takes the array at `index` of the list the place holds before each run (`feed`)."""

    __slots__ = ("index", "place", "private", "source")

    def __init__(self, place, index, old, builder):
        self.place, self.index, self.source = place, index, None
        self.private = fed_private(old, builder)

    def feed(self) -> None:
        self.source = self.place.get()[self.index]
        self.private._data = self.source._data


def fed_private(old, builder):
    """The tensor a program reads where it read `old`, which takes a place's tensor before
    each run (`feed`): it requires a gradient where `old` does, and a run's op records the
    place's tensor itself (`writeback_fed.recorded_sources`), so a backward() goes on into
    that tensor's own graph (an earlier call's), as eager's does, and raises where eager's
    does (a graph freed by an earlier backward())."""
    private = type(old)(old._data)
    private.persistable = True  # (never folded into a constant: it is fed)
    private.stop_gradient = old.stop_gradient
    builder.recapture(old, private)
    return private


def window_for(s, v, log, before, out, rebound, renewed):
    """A `Window` for the place `s` (`v`: what it holds after the trace, `log`: the mutation
    log of what the call reaches, `before`: its snapshot when the call started, `out`: what
    the call returns), appended to `renewed` (its guard: `window_guards`); or None (with
    `rebound` None, a program to save keeps its tensors in place)."""
    start = value_before(before, s)
    if rebound is None or not (s.kind == "list" or s.kind in ("attr", "dict") and type(
            v) is list and type(start) is list and start is not v):
        return None
    lists = (s.obj,) if s.kind == "list" else (start, v)
    if _contains(out, lists):
        return None  # (the list itself returned: the result and the place share it)
    if s.kind != "list":  # (its items when the call started: the trace may have changed it)
        start = value_before(before, type(s)(start, "list", None, s.path))
    if type(start) is not list or not start or any(type(t) is not Tensor for t in start):
        return None
    places = [p for p in log.places() if not moves(p, p.get(), before)]
    elsewhere = held_elsewhere(places, out, lists, s)
    if s.kind != "list" and id(lists[0]) in elsewhere:
        return None  # (the list it held is reached another way: its changes are seen)
    held = window(s, start, v if s.kind == "list" else list(v), elsewhere, current_builder(),
                  rebound)
    if held:
        held.rebuilt = lists[0] if s.kind != "list" else None
        renewed.append(held)
    return held


def _contains(out, lists: tuple, depth: int = 0) -> bool:
    """Whether `out` is one of `lists` or holds one (in tuples, lists and dicts)."""
    if any(out is x for x in lists):
        return True
    if depth > 4 or type(out) not in (tuple, list, dict):
        return False
    return any(_contains(x, lists, depth + 1) for x in (out.values() if type(
        out) is dict else out))


def without_rebuilt(slots: list) -> list:
    """`slots` without the places of the lists that rebuilt `Window`s held when the call
    started (`self.buf.insert(0, h); self.buf = self.buf[:3]`): nothing reaches them after
    the call, and writing them back would change what the window's guards read."""
    dropped = [id(w.rebuilt) for w in slots if type(w) is Window and w.rebuilt is not None]
    return [s for s in slots if type(s) is Window or id(s.obj) not in dropped] if dropped \
        else slots


def window(slot, old, new, elsewhere: set, builder, rebound: list):
    """A `Window` for the place `slot` (`old`: the list's items when the call started, `new`:
    after the trace), its `FedItem`s appended to `rebound`; or None where the tensors found
    are not all plain Tensors held only there (a Parameter, one whose value the
    trace read as Python or that the program writes in place, one also held at another
    place or returned: `elsewhere`, ids), or where `new` holds anything but those tensors
    and computed ones."""
    if type(old) is not list or not old:
        return None
    like = {}
    for t in old:
        if not _windowed(t, old, elsewhere, builder):
            return None
        like[id(t)] = (t._data.shape, t._data.dtype, t.stop_gradient)
    where = {id(t): i for i, t in enumerate(old)}
    moved = []
    for x in new:
        if id(x) in where and x is old[where[id(x)]]:
            moved.append(where[id(x)])
        elif is_variable(x) and not x.is_array:
            moved.append(None)
        else:
            return None
    kept = [m for m in moved if m is not None]
    if len(set(kept)) < len(kept):
        return None  # (one tensor at two places: the program would give two)
    for i, t in enumerate(old):
        if builder.reads(t):
            rebound.append(FedItem(slot, i, t, builder))
    return Window(slot, moved, like)


def _windowed(t, old, elsewhere: set, builder) -> bool:
    return type(t) is Tensor and id(t) not in elsewhere and \
        sum(x is t for x in old) == 1 and not builder.wrote(t)


def held_elsewhere(slots, out, lists: tuple, slot) -> set:
    """The ids of the eager tensors that places other than the window's hold after the
    trace (`slots`: the mutation log's places; `lists`: the window's list, or the list its
    place held and the one it holds now; `slot`: its place), that the call returns (`out`),
    or that a guard of the trace names other than through the window (a value read as
    Python, a read through another place)."""
    ids = {id(x) for x in pytree.flatten(out)[0]}
    for s in slots:
        if s.kind == "list" and any(s.obj is x for x in lists) or s.ident() == slot.ident():
            continue
        v = s.get()
        for x in (v if s.kind == "list" else pytree.flatten(v)[0] if type(v) is tuple else (v,)):
            ids.add(id(x))
    for place, how, expected in guards.recorded() or ():
        if place[0] in ("list", "index") and any(place[1] is x for x in lists) or \
                _at(place, slot) and expected is lists[0]:
            continue
        ids.add(id(place[1]))
        ids.update(id(x) for x in (expected if type(expected) is tuple else (expected,)))
    return ids


def _at(place, slot) -> bool:
    """Whether a guard's place is the attribute or dict item `slot`."""
    return place[0] in ("attr", "item") and slot.kind in ("attr", "dict") and \
        place[1] is slot.obj and place[2] == slot.key


def window_guards(found: tuple, windows: list) -> tuple:
    """The trace's guards, where the tensors a `Window` found are guarded by their shape and
    dtype (`guards.Like`) instead of their identity, in its list's items and at constant
    indexes (`self.buf[-1]`); a rebuilt one's place by holding a list of such items."""
    for w in windows:
        out = []
        lst = w.obj if w.rebuilt is None else w.rebuilt
        for place, how, expected in found:
            if place[1] is lst and place[0] == "list" and how == "items":
                if w.rebuilt is not None:
                    continue  # (the list it held: the place's guard below stands for it)
                expected = _like(expected, w.like)
            elif place[1] is lst and place[0] == "index":
                if w.rebuilt is not None:
                    continue
                if how == "is" and id(expected) in w.like:
                    how, expected = "like", w.like[id(expected)]
            elif w.rebuilt is not None and how == "is" and expected is lst and _at(
                    place, w.slot):
                out.append((place, "type", list))
                how, expected = "items", _like(tuple(lst), w.like)
            out.append((place, how, expected))
        found = tuple(out)
    return found


def _like(items: tuple, like: dict) -> tuple:
    return tuple(guards.Like(like[id(x)]) if id(x) in like else x for x in items)


# ---- tensors moved between places: `self.prev = self.cur` ----------------------------------

class Moved:
    """A place the call set to an eager tensor that another place held when the call started
    (`self.prev = self.cur`, `self.oldest = self.buf[0]`): after each run it gets the tensor
    that place holds then, read before anything is written back (`source_value`), as eager
    code moves it; a tensor no place held (a global one) is stored itself."""

    __slots__ = ("kind", "obj", "path", "slot", "source")

    def __init__(self, slot, source):
        self.slot, self.source = slot, source  # source: a slot, (list, index), or a tensor
        self.kind, self.obj, self.path = slot.kind, slot.obj, slot.path

    def get(self):
        return None  # (no program output: `set` takes the tensor itself)

    def source_value(self):
        src = self.source
        if type(src) is tuple:
            return src[0][src[1]]
        return src.get() if hasattr(src, "ident") else src

    def set(self, value):
        self.slot.set(value)

    def ident(self):
        return self.slot.ident()


def moves(s, v, before) -> bool:
    """Whether the trace set the place `s` to an eager tensor it did not hold (`Moved`;
    `before`: the mutation log's snapshot when the call started)."""
    return isinstance(v, Tensor) and s.kind != "list" and v is not value_before(before, s)


def moved(slot, v, places, before):
    """A `Moved` for the place `slot` that the trace set to the eager tensor `v`, found where
    the call started (`places`: the log's; `before`: its snapshot then)."""
    for s in places:
        old = value_before(before, s)
        if s.kind == "list" and type(old) is list:
            for i, x in enumerate(old):
                if x is v:
                    return Moved(slot, (s.obj, i))
        elif old is v and s.ident() != slot.ident():
            return Moved(slot, s)
    return Moved(slot, v)
