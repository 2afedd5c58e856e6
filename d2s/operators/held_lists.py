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

from .mutation import Log, Slot, StateChangeError
from .variables import where

# (id(program), slot ident) -> the place's object and the list it held when it became an
# array (`_Origin`): `writeback` writes the call's items into that list when the place held
# it before the call (every alias of it outside the call then sees them, as in eager code)
_ORIGINS: dict = {}


_TRACE_LOGS: list = []  # weak references to the logs of the calls being traced (`writeback`)


def trace_log(log: Log) -> None:
    """`log` (of everything a call being traced can reach) is d2s's: what it holds is not
    another reference to a list."""
    import weakref
    _TRACE_LOGS[:] = [r for r in _TRACE_LOGS if r() is not None] + [weakref.ref(log)]


def trace_logs(log: Log) -> tuple:
    return (log,) + tuple(x for x in (r() for r in _TRACE_LOGS) if x is not None)


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
        from .aliases import other_references
        slot, container = places[0]
        name = slot.path if slot.kind == "cell" else ""
        others = other_references(lst, name, trace_logs(log), holder=container)
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
    from runtime.program.builder import current_builder
    _ORIGINS[(id(current_builder().program), slot.ident())] = _Origin(slot.obj, lst)


def origin(program, slot):
    """The list object `slot`'s place held when it became a tensor array in `program`'s
    trace, or None."""
    entry = _ORIGINS.get((id(program), slot.ident()))
    return entry.lst if entry is not None and entry.obj is slot.obj else None


def forget(program) -> None:
    """The entries of `program`'s trace (it ended)."""
    for k in [k for k in _ORIGINS if k[0] == id(program)]:
        del _ORIGINS[k]


def if_arrays(log: Log, given: list, n: int, arrays: dict) -> bool:
    """Lists the two branches of a tensor `if` changed in place (not by a state name) and
    left with different lengths: the one place holding each (`holder`) replaces the list as
    the changed slot, and becomes a tensor array in both branches (added to `arrays`, as
    (output index, ()) -> dtype); True if any."""
    if len(given) != 2:
        return False
    from .branch_arrays import _array_paths
    found = {}
    for j, slot in enumerate(list(log.slots)):
        i = n + j
        if slot.kind != "list" or (i, ()) in arrays or i >= min(map(len, given)) or \
                id(slot.obj) in log.arg_ids:  # (a state name's list: `_array_lists`)
            continue
        paths = [(p, dt) for p, dt in _array_paths(given[0][i], given[1][i], ()) if not p]
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
