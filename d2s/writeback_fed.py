"""Places holding eager tensors that the converted call rebinds (`writeback.py`): how each is
written back (`rebinding`), the tensor the program reads fed from the place before each run
(`Fed`), and the guards that check such a place by its tensor's kind, not its identity
(`fed_guards`), so one program serves every call. A fed tensor with a gradient path keeps
it: the run records the place's tensor itself (`recorded_sources`), as eager code reads it."""
from __future__ import annotations

import runtime as rt
from runtime.program.builder import current_builder

from . import guards
from .operators.state_at_raise import keeps_identity
from .writeback_items import Window, fed_private, window_guards


def in_place(old) -> bool:
    """Whether a place that held the eager Tensor `old` when the call started and that the
    call sets to a new tensor keeps `old`, which the program writes in place (for a list's
    items; other places: `rebinding`): a Parameter (`state_at_raise.keeps_identity`), or a
    tensor the program reads, as a graph value or as Python (`int(self.n)`, guarded by its
    data). Otherwise the place gets a new Tensor after each call, as eager code rebinds it,
    and a reference the user kept to the old one keeps its value."""
    return keeps_identity(old) or current_builder().reads(old) or _value_read(old)


def _value_read(tensor) -> bool:
    return any(g[1] == "data" and g[0][1] is tensor for g in guards.recorded() or ())


def rebinding(slot, old) -> str:
    """How a place that held the eager Tensor `old` when the call started and that the call
    sets to a new tensor is written back: "new" (a new Tensor after each call, as eager code
    rebinds it: the program does not read `old`, or reads it only through other places,
    which keep it), "fed" (a new Tensor too; the program reads `old` only as what this place
    holds, so it reads the place's tensor when it runs: `Fed`), "apart" (a new Tensor too,
    the place guarded by identity: the program reads `old` through this place and others,
    `self.a = self.a + self.b` where both held one tensor, which the others keep, so the next
    call, where the place holds a tensor of its own, traces again), or "in place" (the place
    keeps `old`, which the program writes: a Parameter, or a tensor read as Python)."""
    if keeps_identity(old) or _value_read(old):
        return "in place"
    if not current_builder().reads(old):
        return "new"
    here = elsewhere = False
    for place, how, expected in guards.recorded() or ():
        if expected is old and how == "is" and _same_place(place, slot):
            here = True
        elif expected is old or place[1] is old or type(expected) is tuple and any(
                x is old for x in expected):
            elsewhere = True
    if here and not elsewhere and slot.kind != "list":
        return "fed"
    if here and elsewhere and slot.kind != "list":
        return "apart"
    return "new" if elsewhere and not here else "in place"


def _same_place(place: tuple, slot) -> bool:
    """Whether a guard's place is `slot` (a Layer's buffer is also its `_buffers` item)."""
    if slot.kind == "cell":
        return place[1] is slot.obj
    if len(place) < 3 or place[2] != slot.key:
        return False
    if place[1] is slot.obj:
        return True
    return slot.kind == "dict" and hasattr(place[1], "__dict__") and vars(place[1]).get(
        "_buffers") is slot.obj


class Fed:
    """A place holding a tensor that the program reads and that the call rebinds
    (`self.ema = self.ema * 0.9 + loss * 0.1`): the program reads `private`, a tensor of its
    own that takes the place's array before each run (`feed`); after each run the place gets
    a new Tensor, as eager code rebinds it, so a reference the user kept keeps its value. The
    place is guarded by its tensor's shape, dtype and `stop_gradient` (`fed_guards`), not its
    identity."""

    __slots__ = ("like", "old_id", "private", "slot", "source")

    def __init__(self, slot, old):
        self.slot, self.old_id, self.source = slot, id(old), None
        self.private = fed_private(old, current_builder())
        self.like = (old._data.shape, old._data.dtype, old.stop_gradient)

    def feed(self) -> None:
        self.source = self.slot.get()
        self.private._data = self.source._data


class Renewed:
    """A place holding a tensor that the call rebinds and whose old Tensor the program does
    not read through it (`self.cache["bias"] = rt.full(...)`, then read): after each run it
    holds a new Tensor, as eager's, so its guard is its tensor's shape and dtype
    (`fed_guards`), not the identity that the next call would never see again."""

    __slots__ = ("like", "old_id", "slot")

    def __init__(self, slot, old):
        self.slot, self.old_id = slot, id(old)
        self.like = (old._data.shape, old._data.dtype)


def fed_guards(found: tuple, rebound: list) -> tuple:
    """The trace's guards, where a place is `Fed` (or `Renewed`) by its tensor's shape and
    dtype (a fed one's `stop_gradient` too) instead of its identity."""
    found = window_guards(found, [f for f in rebound if isinstance(f, Window)])
    by_id = {f.old_id: f for f in rebound if isinstance(f, (Fed, Renewed))}
    if not by_id:
        return found
    out = []
    for g in found:
        f = by_id.get(id(g[2])) if g[1] == "is" else None
        if f is not None and _same_place(g[0], f.slot):
            g = (g[0], "like", f.like)
        out.append(g)
    return tuple(out)


def moved_from(s, old, rebound, renewed) -> None:
    """The tensor `old` that the place `s` held when the call started, which the call set
    to another eager tensor (`st.prev = st.cur`): not kept by the program, so the place is
    guarded by its tensor's kind, not its identity (the next call finds the tensor moved
    there, a new one each call): fed where the program reads it through `s` only."""
    if not isinstance(old, rt.Tensor) or rebound is None:
        return
    how = rebinding(s, old)
    if how == "fed":
        rebound.append(Fed(s, old))
    elif how == "new":
        renewed.append(Renewed(s, old))


def fed_params(params: tuple, rebound: list) -> list:
    """(index in `params`, place) of the program's captured tensors with a gradient path
    that are fed from places (`Fed`, `writeback_items.FedItem`)."""
    by_id = {id(p.private): p for p in rebound if hasattr(p, "private")}
    return [(j, by_id[id(t)]) for j, t in enumerate(params) if id(t) in by_id]


def recorded_sources(inputs, params: tuple, unread: frozenset, fed: list) -> tuple:
    """The call's tensors and the captured ones, as the run op records them: where a place
    fed the program (`fed`: `fed_params`), the tensor it held (with the graph an earlier
    call left it, as eager code reads it); those the program only writes without their
    gradient path (a `self.h` a first eager call left with a graph that its backward freed
    is not walked again)."""
    if fed:
        params = list(params)
        for j, place in fed:
            params[j] = place.source
        params = tuple(params)
    sources = tuple(inputs) + params
    if not unread:
        return sources
    return tuple(t.detach() if k in unread else t for k, t in enumerate(sources))
