"""A list reached through another name than a local one becomes a tensor array at its place.

A list whose length depends on a tensor (a different number of appends in the branches of a
tensor `if`, appends or pops in a graph loop) becomes a tensor array. When the function's
own local name holds it, that name is rebound to the array (`control_flow`, `loops`). When
the list is reached through something else — a closure variable (`log.append(v)` in a
closure), an attribute (`self.hist.append(v)`), a dict entry (`cache["outs"].append(h)`) or
a module global — the mutation log found it changed in place; if that one place is the only
reference to the list anywhere, the place itself is rebound to the array (the cond / while
op carries it), so every later read of `self.hist` / `cache["outs"]` / the closure variable
in the traced code sees the array. After the call, `writeback` stores the array's items there
as the list of Tensors eager code leaves: into the same list object when the place held it
before the call (`origin`). A list with any other reference (another name, a second
container, a list holding it, a tuple) cannot: that reference would keep the old list, so it
is refused with a StateChangeError naming the list and the other reference.
"""
from __future__ import annotations

from .aliases import other_references
from .branch_arrays import array_paths
from .mutation import Log, Slot, StateChangeError
from .trace_state import current
from .variables import where


def holder(log: Log, lst: list, what: str) -> Slot:
    """The one place among the objects `log` walked that holds `lst` (a closure cell, a dict
    entry, an attribute, a module global), as a Slot; StateChangeError (saying `what` made the
    list's length depend on a tensor) when there is none, more than one, or another
    reference."""
    places = []
    why = ""
    for obj, kind, path, snap in log.seen.values():
        if kind == "cell" and snap is lst:
            places.append((Slot(obj, "cell", None, path), None))
        elif kind in ("dict", "obj", "globals") and isinstance(snap, dict):
            container = obj if kind != "obj" else vars(obj)
            for k, v in snap.items():
                if v is not lst:
                    continue
                if kind == "dict":
                    places.append((Slot(obj, "dict", k, f"{path}[{k!r}]"), container))
                elif kind == "obj":
                    places.append((Slot(obj, "attr", k, f"{path}.{k}"), container))
                else:
                    places.append((Slot(obj, "global", k, k), container))
        elif kind == "list" and any(v is lst for v in snap):
            why = f"the list {path} holds it too"
    path = places[0][0].path if places else _path(log, lst)
    if not why and len(places) != 1:
        why = ("it is held by " + ", ".join(p.path for p, _ in places) if places else
               "d2s cannot find the one place that holds it")
    if not why:
        slot, container = places[0]
        name = slot.path if slot.kind == "cell" else ""
        others = other_references(lst, name, current().logs(log), holder=container)
        if others:
            why = "it is also reachable as " + ", ".join(others)
    if why:
        raise StateChangeError(
            f"the list {path} {what} ({where(log.src)}), so it must become a tensor array, "
            f"and {why}; that other reference would keep the old list. Keep one reference to "
            "the list (build it where it is used, or return it), or collect the values in a "
            "tensor (rt.concat / rt.where).", log.src)
    slot = places[0][0]
    remember(slot, lst)
    return slot


def _path(log: Log, lst) -> str:
    entry = log.seen.get(id(lst))
    return entry[2] if entry is not None and entry[2] else "(a list)"


class _Origin:
    """A place's object and the list it held (d2s's: not another reference to the list)."""

    __slots__ = ("obj", "lst")

    def __init__(self, obj, lst):
        self.obj, self.lst = obj, lst


def remember(slot: Slot, lst: list) -> None:
    """`slot`'s place held `lst` when it became a tensor array (`origin`)."""
    current().origins[slot.ident()] = _Origin(slot.obj, lst)


def origin(slot):
    """The list object `slot`'s place held when it became a tensor array in the trace
    running now, or None."""
    entry = current().origins.get(slot.ident())
    return entry.lst if entry is not None and entry.obj is slot.obj else None


def if_arrays(log: Log, given: list, n: int, arrays: dict) -> bool:
    """Lists the two branches of a tensor `if` changed in place (not by a state name) and
    left with different lengths: the one place holding each (`holder`) replaces the list as
    the changed slot, and becomes a tensor array in both branches (added to `arrays`, as
    (output index, ()) -> dtype); True if any."""
    if len(given) != 2:
        return False
    found = {}
    for j, slot in enumerate(list(log.slots)):
        i = n + j
        if slot.kind != "list" or (i, ()) in arrays or i >= min(map(len, given)) or \
                id(slot.obj) in log.arg_ids:  # (a state name's list: `_array_lists`)
            continue
        paths = [(p, dt) for p, dt in array_paths(given[0][i], given[1][i], ()) if not p]
        if not paths:
            continue
        place = holder(log, slot.obj, "has a length that depends on a tensor condition")
        log.slots[j] = place
        log._ids.discard(slot.ident())
        log._ids.add(place.ident())
        log.quiet.add(id(slot.obj))  # the list itself: put back after each branch only
        found[(i, ())] = paths[0][1]
    arrays.update(found)
    return bool(found)
