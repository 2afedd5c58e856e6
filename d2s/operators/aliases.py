"""Other references to a Python list about to become a tensor array.

A list whose length depends on a tensor (appended to in a graph loop, or a different number of
times in the branches of a tensor `if`) becomes a tensor array, and the *name* that held it is
rebound to the array. Any other reference to the same list object — another local name
(`keep = outs`), a container, an attribute, a global, a closure variable — would keep the old
Python list and silently miss the appends eager code makes. `other_references` finds them
with the garbage collector's referrer lists, ignoring d2s's own frames and bookkeeping, so
that the caller can refuse with a clear error instead.
"""
from __future__ import annotations

import contextlib
import gc
import re
import sys
import threading

from runtime.program.origin import frame_line

from .. import guards
from ..pyct import loader

_BLOCK = re.compile(r"_(if_true|if_false|loop_body|loop_test|for_body)_\d+$")


def _internal_frame(frame) -> bool:
    name = frame.f_globals.get("__name__", "") or ""
    return name.split(".", 1)[0] in ("d2s", "runtime")


_RENAMED = re.compile(r"_(\w+?)_\d+$")


def _base(name: str) -> str:
    """A state name without the renaming d2s gives a closure variable's parameter in a block
    function (`_lst_3` carries `lst`)."""
    m = _RENAMED.fullmatch(name)
    return m.group(1) if m else name


def _collect(values, ours: set, depth: int, keep: list | None = None) -> None:
    """The ids of d2s's own containers (and the containers in them, `depth` levels); the
    containers themselves go to `keep` (to count the references they hold)."""
    for v in values:
        if id(v) in ours:
            continue
        ours.add(id(v))
        if keep is not None and type(v) in (list, tuple, dict):
            keep.append(v)
        if not depth:
            continue
        if type(v) in (list, tuple, dict):
            _collect(v.values() if type(v) is dict else v, ours, depth - 1, keep)
        elif (type(v).__module__ or "").startswith("d2s."):  # d2s's own bookkeeping objects
            try:
                fields = object.__getattribute__(v, "__dict__")  # (no __getattr__ runs)
            except AttributeError:
                continue
            if keep is not None:
                keep.append(fields)
            _collect(fields.values(), ours, depth - 1, keep)


def _owner_frames(ours: set, keep: list) -> list:
    """The converted frames that own the state name: the block functions d2s generated
    (branches, loop bodies) up to the user's function itself. d2s's frames in between, and
    what they hold, go into `ours`."""
    owners = []
    f = sys._getframe(2)
    while f is not None:
        if loader.lookup(f.f_code.co_filename, frame_line(f)) is not None:
            owners.append(f)
            ours.add(id(f.f_locals))
            if not _BLOCK.match(f.f_code.co_name):
                break
        elif _internal_frame(f):
            ours.add(id(f))
            local = f.f_locals
            ours.add(id(local))
            _collect(local.values(), ours, 6, keep)
        f = f.f_back
    return owners


class _Referrers:
    """`gc.get_referrers`, one heap scan for many objects. Each scan walks every object the
    collector tracks (the cost grows with the user's heap), so the check asks for the
    referrers of what it will judge next (`ahead`) and `of` scans them together with the one
    it needs now. The lists this object keeps are not referrers of anything it is asked
    about (as the check's own lists were not)."""

    def __init__(self):
        self._found: dict = {}  # id -> the referrers of that object
        self._ahead: dict = {}  # id -> an object to scan with the next scan
        self._kept: list = []  # each scan's lists (alive, so that their ids stay theirs)
        self._own = {id(self._found), id(self._ahead), id(self._kept)}

    def ahead(self, objs) -> None:
        for o in objs:
            if id(o) not in self._found:
                self._ahead[id(o)] = o

    def of(self, obj) -> list:
        if id(obj) not in self._found:
            self._ahead[id(obj)] = obj
            self._scan()
        return self._found[id(obj)]

    def up(self, objs, levels: int, known: set) -> None:
        """Scan the referrers of the containers and cells among `objs`, and of the ones
        holding those, `levels` levels up: one scan a level for what the check will judge
        (not the objects whose ids are `known`: judged without their referrers)."""
        self._kept.append(objs)  # (a list of its own: not a referrer)
        self._own.add(id(objs))
        frontier = [o for o in objs if _judged(o)]
        for _ in range(levels):
            self._kept.append(frontier)  # (a list of its own: not a referrer)
            self._own.add(id(frontier))
            self.ahead(frontier)
            if not self._ahead:
                return
            self._scan()
            frontier = [h for o in frontier for h in self._found[id(o)]
                        if _judged(h) and id(h) not in self._found and not self.owns(h)
                        and id(h) not in known]

    def forget(self) -> None:
        self._found.clear()
        self._ahead.clear()
        self._kept.clear()

    def owns(self, x) -> bool:
        return id(x) in self._own

    def _scan(self) -> None:
        objs = list(self._ahead.values())
        self._ahead.clear()
        by_id = {id(o): [] for o in objs}
        self._kept += [objs, by_id]
        self._own.update([id(objs), id(by_id)] + [id(v) for v in by_id.values()])
        mark = _Mark()  # the call's own argument tuple is the one tuple that ends with it
        for h in gc.get_referrers(*objs, mark):
            if id(h) in self._own or type(h) is tuple and h and h[-1] is mark:
                continue
            named = set()
            for r in gc.get_referents(h):
                lst = by_id.get(id(r))
                if lst is not None and id(r) not in named:
                    named.add(id(r))
                    lst.append(h)
        for o in objs:
            self._found[id(o)] = by_id[id(o)]


def _judged(x) -> bool:
    return type(x) in (tuple, list, dict) or type(x).__name__ == "cell"


class _Mark:
    """A fresh object that marks `gc.get_referrers`' own argument tuple."""


_CALL = threading.local()  # .lists: {id: list} of the lists the traced call was given


@contextlib.contextmanager
def call_arguments(args, kwargs):
    """While a call is traced: the lists it was given as arguments. The caller holds them
    (in a variable of a frame the collector may not list), so each is an other reference
    of its own: a list passed in that would become a tensor array is refused, not left
    without the appends (eager code appends to the caller's list)."""
    lists = {id(a): a for a in (*args, *kwargs.values()) if type(a) is list}
    before = getattr(_CALL, "lists", None), getattr(_CALL, "args", ())
    _CALL.lists, _CALL.args = lists, (*args, *kwargs.values())
    try:
        yield
    finally:
        _CALL.lists, _CALL.args = before


def traced_arguments() -> tuple:
    """The arguments of the call being traced (as the converted function got them: a list
    or dict holding tensors is a copy), or () outside a trace."""
    return getattr(_CALL, "args", ())


def other_references(obj, name: str, logs=(), holder=None) -> list[str]:
    """Descriptions of the references to `obj` other than the state name `name` in the
    converted frames that own it, and d2s's own (its frames' locals, the snapshots of the
    mutation `logs`). `holder` (a dict: a container's, an object's `__dict__`, a module's
    globals) may hold it once more: the place that becomes the tensor array."""
    given = getattr(_CALL, "lists", None)
    if given and id(obj) in given and given[id(obj)] is obj:
        return ["the caller's list (an argument of the converted function)"]
    try:
        return _other_references(obj, name, logs, holder)
    finally:
        # The frames' `f_locals` read on the way hold the frames that read them (a cycle,
        # with every list scanned): left to the collector, which d2s pauses while tracing,
        # they would be "other references" to the next list checked. Drop them now.
        _forget_own_locals()


def _forget_own_locals() -> None:
    for f in _LOCALS_READ:
        try:
            f.f_locals.clear()
        except Exception:  # noqa: BLE001  (a frame already torn down)
            pass
    _LOCALS_READ.clear()


_LOCALS_READ: list = []  # d2s's own frames (of this module) whose f_locals were read


def _other_references(obj, name: str, logs=(), holder=None) -> list[str]:
    _LOCALS_READ.append(sys._getframe(0))
    ours: set = set()
    keep: list = []  # d2s's containers that may hold it
    if guards.recorded():  # the trace's guards (a read of `self.hist` records the list)
        _collect([guards.recorded()], ours, 3, keep)
    if holder is not None:
        if sum(1 for v in holder.values() if v is obj) > 1:
            return [f"another key of {_kind(holder)}"]
        ours.add(id(holder))
        keep.append(holder)  # (its one reference is counted)
    for log in logs:
        for entry in log.seen.values():
            ours.add(id(entry))
            ours.add(id(entry[3]))
            keep += [entry, entry[3]] if type(entry[3]) in (list, tuple, dict) else [entry]
        ours.update(id(s) for s in log.slots)
        keep.append(vars(log))
        _collect(vars(log).values(), ours, 6, keep)
    owners = _owner_frames(ours, keep)
    if not owners:
        return []
    if _accounted(obj, keep, owners, name):
        return []
    # The collector is paused while tracing: the cycles the trace left (finished branch and
    # loop-body frames, their locals, snapshots) would each be a referrer to judge, more with
    # every branch traced (a slowdown that grew with the function, to minutes). Free them
    # first (a full collection: some hang on older garbage).
    gc.collect()
    ours.add(id(keep))
    f = sys._getframe(0)
    while f is not None:  # the f_locals dicts materialised on the way are d2s's too
        if _internal_frame(f):
            ours.add(id(f.f_locals))
        if f is owners[-1]:
            break
        f = f.f_back
    named = set()  # names bound to it in the owning frames (cells included)
    for o in owners:
        for k, v in o.f_locals.items():
            if v is obj:
                named.add((k, k in o.f_code.co_cellvars or k in o.f_code.co_freevars))
    found = sorted({f"the local name '{k}'" for k, _ in named if _base(k) != _base(name)})
    return found + _judge_referrers(obj, name, ours, owners, named)


def _judge_referrers(obj, name: str, ours: set, owners: list, named: set) -> list[str]:
    """Descriptions of the referrers of `obj` that are neither d2s's nor the owning frames'
    state name."""
    heap = _Referrers()
    try:
        # (`_temporary` looks 5 levels up; a cell's tuple, its function)
        heap.up([obj], 7, ours | {id(o.f_locals) for o in owners})
        return _judge(obj, name, ours, owners, named, heap)
    finally:
        heap.forget()  # (its lists hold the frames that hold `obj`: no cycle left behind)


def _judge(obj, name: str, ours: set, owners: list, named: set, heap: _Referrers) -> list:
    found: list = []
    cells = 0
    users = {id(o.f_locals) for o in owners}  # (a container a user's local holds is theirs)
    live = set()  # the frames running now
    f = sys._getframe(0)
    while f is not None:
        live.add(id(f))
        f = f.f_back
    refs = heap.of(obj)
    for r in refs:
        if id(r) in ours or any(r is o for o in owners) or _temporary(r, refs, ours, heap, users):
            continue
        if type(r).__name__ == "frame":
            if _BLOCK.match(r.f_code.co_name) and id(r) not in live:
                continue  # a finished branch / loop body function (kept by a traceback)
            if not _internal_frame(r) and r.f_code is not other_references.__code__:
                found += [f"'{k}' in {r.f_code.co_name}" for k, v in r.f_locals.items()
                          if v is obj] or [f"a variable of {r.f_code.co_name}"]
        elif type(r).__name__ == "cell":
            cells += _cell_alias(r, {k for k, _ in named} | {name}, heap)
        elif type(r) is dict and r is owners[-1].f_globals:
            found += [f"the global '{k}'" for k, v in r.items() if v is obj]
        elif type(r) is dict and _frame_locals(r, obj, name, found, heap):
            pass  # a frame's materialised locals: judged as that frame
        elif type(r) in (list, tuple, dict):
            found.append(f"a {type(r).__name__} holding it")
        elif not (type(r).__module__ or "").startswith("d2s."):  # (d2s's write-back slots)
            found.append(f"a {type(r).__name__} object")
    if cells:
        found.append("a closure variable")
    return found


def _kind(d: dict) -> str:
    return "the same dict" if type(d) is dict else f"the same {type(d).__name__}"


def _accounted(obj, keep: list, owners: list, name: str) -> bool:
    """Whether every reference to `obj` is one this module can name without scanning the
    heap: d2s's frames from here up to the user's function (their locals, the cells of
    their closure variables and their materialised `f_locals`), the state name in the owning
    frames, and d2s's containers in `keep`. Then there is no other reference (the common
    case, cheap); otherwise the caller scans the referrers."""
    _LOCALS_READ.append(sys._getframe(0))
    counted = 1  # sys.getrefcount's own argument
    cells = set()
    base = _base(name)
    f = sys._getframe(0)
    while f is not None:
        code = f.f_code
        owner = any(f is o for o in owners)
        for k, v in f.f_locals.items():
            if v is obj and owner and _base(k) != base:
                return False  # another name for it: found by the caller's scan
            if v is obj:
                counted += 1  # the f_locals dict's entry
                if k in code.co_cellvars:
                    cells.add((id(f), k))  # the frame's own cell (a closure shares it)
                elif k not in code.co_freevars:  # (a free variable: the defining frame's)
                    counted += 1  # the frame's own slot
        if f is owners[-1]:
            break  # the user's function: what calls it is not d2s's
        f = f.f_back
    counted += len(cells)
    seen = set()
    for c in keep:
        if c is obj:  # `keep` itself holds it
            counted += 1
        if id(c) in seen or c is obj:
            continue
        seen.add(id(c))
        counted += sum(1 for x in (c.values() if type(c) is dict else c) if x is obj)
    return sys.getrefcount(obj) <= counted


def _frame_locals(d: dict, obj, name: str, found: list, heap: _Referrers) -> bool:
    """When `d` is the materialised `f_locals` of a frame: d2s's frames and converted
    frames holding it under the state name add nothing, other names are reported."""
    for h in heap.of(d):
        if type(h).__name__ != "frame":
            continue
        try:
            if h.f_locals is not d:
                continue
        except Exception:  # noqa: BLE001  (a frame being torn down)
            continue
        if _internal_frame(h):
            return True
        if loader.lookup(h.f_code.co_filename, frame_line(h)) is not None:
            found += [f"the local name '{k}'" for k, v in d.items()
                      if v is obj and _base(k) != _base(name)]
            return True
    return False


def _temporary(r, refs, ours, heap: _Referrers, users=frozenset(), depth: int = 4,
               seen=None) -> bool:
    """A container only d2s holds: nothing but d2s's frames, closures, bookkeeping objects
    and such containers (`depth` levels up), or nothing at all (an argument tuple on the
    interpreter's stack). A container the user can reach is held, some levels up, by a user
    frame, object or module."""
    if type(r) not in (tuple, list, dict):
        return False
    seen = set() if seen is None else seen
    if id(r) in seen:
        return True
    seen.add(id(r))
    holders = heap.of(r)
    heap.ahead(h for h in holders if _judged(h))  # (judged next: scanned together)
    for h in holders:
        if id(h) in users:
            return False  # a local variable of the user's function holds the container
        if h is refs or id(h) in ours or id(h) in seen or heap.owns(h):
            continue
        kind = type(h).__name__
        if kind == "frame" and _internal_frame(h) or kind == "cell" and _internal_cell(
                h, heap):
            continue
        if kind == "function" and getattr(h, "__globals__", None) is r and (
                h.__module__ or "").startswith("d2s."):
            continue  # the namespace of d2s's own compiled function (a program's guards)
        if type(h) is dict and _owned_by_d2s(h, heap):
            continue  # the attributes of one of d2s's own objects
        if depth and type(h) in (tuple, list, dict) and _temporary(
                h, refs, ours, heap, users, depth - 1, seen):
            continue
        return False
    return True


def _owned_by_d2s(d: dict, heap: _Referrers) -> bool:
    """`d` is the `__dict__` of an object of a d2s class."""
    for o in heap.of(d):
        if getattr(o, "__dict__", None) is d:
            return (type(o).__module__ or "").startswith("d2s.")
    return False


def _internal_cell(cell, heap: _Referrers) -> bool:
    """A closure cell of d2s's own functions only."""
    holders = heap.of(cell)
    heap.ahead(h for h in holders if type(h) is tuple)
    for holder in holders:
        if type(holder) is tuple:
            for fn in heap.of(holder):
                if getattr(fn, "__closure__", None) is holder and (
                        fn.__module__ or "").split(".", 1)[0] not in ("d2s", "runtime"):
                    return False
        elif type(holder).__name__ == "frame" and not _internal_frame(holder):
            return False
    return True


def _cell_alias(cell, allowed: set, heap: _Referrers) -> int:
    """1 when a closure cell holding the list is a variable of another name (0 when it is
    the state name's own cell, or d2s's)."""
    holders = heap.of(cell)
    heap.ahead(h for h in holders if type(h) is tuple)
    for holder in holders:
        if type(holder) is not tuple:
            continue
        for fn in heap.of(holder):
            code = getattr(fn, "__code__", None)
            if code is None or getattr(fn, "__closure__", None) is not holder:
                continue
            if (fn.__module__ or "").split(".", 1)[0] in ("d2s", "runtime"):
                continue
            # by identity: `==` of two cells compares their contents (a graph value's `==`
            # is a tensor)
            index = next(i for i, c in enumerate(holder) if c is cell)
            if _base(code.co_freevars[index]) not in {_base(a) for a in allowed}:
                return 1
    return 0
