"""Programs traced from a StaticFunction, one per input signature (tracing: `tracing.py`;
running: `running.py`).

`ProgramCache.find` builds the key of a call of a `TraceTarget` (`function_spec.py`), traces a
new program on a miss (warning when a function keeps being traced), and returns the `Entry`
that runs it. Running feeds the tensor arguments' arrays
to the compiled program. When gradients are wanted (grad mode on and an input or a captured
parameter needs a gradient), the call runs the forward part of a training program (the traced
program plus `rt.static.gradients`, split by `runtime.program.split`) and is recorded as ONE
autograd op whose backward runs the backward part on the values the forward part saved: the
forward runs once per step, so random ops and running statistics behave as in eager code, and
`loss.backward()` and `opt.step()` work exactly as after eager code. Parameters are captured
by the program as persistable variables that read the Layer's own tensors: both modes share
them.
"""
from __future__ import annotations

import collections
import dataclasses
import os
import threading
import warnings
import weakref

from runtime.program import leaf_hooks
from runtime.program.variable import Variable

from . import guards, logging_utils, rebinding
from .function_spec import TraceTarget, _Identity
from .running import ConcreteProgram, Entry, gc_paused
from .tracing import trace

RETRACE_WARNING = 5  # warn when one function has been traced this many times


class ProgramCache:
    """Signature -> traced program for one StaticFunction; `len()` is the number of programs.

    At most `max_size` programs are kept (least recently used first out; the default is
    `DEFAULT_SIZE`, settable per function: `f.program_cache.max_size = 8`). The first call of
    a signature traces under a lock: other threads making the same call wait for that program
    and reuse it. A trace that fails caches nothing.
    """

    DEFAULT_SIZE = 64

    def __init__(self, max_size: int | None = None):
        # key -> [entries]: one per set of guard values (`d2s/guards.py`), newest first
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self.max_size = max_size if max_size is not None else self.DEFAULT_SIZE
        self.traces = 0  # programs traced so far (evicted ones included)
        self.last_entry = None  # the latest call's Entry (`running.py`)
        self._last_key = None
        self._count = 0
        self._lock = threading.RLock()
        _CACHES.add(self)
        self.effect_places: dict = {}  # places (Python values) traces changed: side_effects
        # the values key of a trace's arguments (`rebinding.py`) -> its entries, newest first
        self._by_values: dict = {}
        self._traced_objs: set = set()  # ids of the argument objects of every trace so far

    def __len__(self):
        return self._count

    def __iter__(self):
        return iter(list(self._entries))

    def items(self) -> list[tuple]:
        """(key, entry) for every program kept, least recently used first."""
        return [(key, entry) for key, lst in list(self._entries.items()) for entry in lst]

    def find(self, target: TraceTarget, args, kwargs):
        """(the entry for this call of `target`, traced if needed; the call's tensors in feed
        order)."""
        spec = target.spec
        if kwargs:
            args, kwargs = spec.normalize(args, kwargs)
        if len(args) < spec.n_positional:
            args = spec.complete(args)
        key, tensors = spec.key(args, kwargs, target.instance, target.training)
        entries = self._entries
        found = entries.get(key)  # (never empty: lists are replaced whole, under the lock)
        changed = None
        if found:
            for entry in found:
                check = entry.check
                if check is None or _holds(check):
                    break
            else:
                changed = guards.failing(found[0].guards)
                found = None
        if found is None and self._by_values:  # fresh objects of a structure seen before
            entry = self._rebound(target, args, kwargs)
            found = entry and [entry]
        if found is None:
            with self._lock:
                entry = self._trace_new(target, args, kwargs, key, changed)
        else:
            try:
                entries.move_to_end(key)
            except KeyError:  # evicted by another thread's trace meanwhile
                pass
        self._last_key = key
        self.last_entry = entry
        return entry, tensors

    def _trace_new(self, target, args, kwargs, key, changed):
        entries = self._entries
        for entry in entries.get(key, ()):  # another thread may have traced it meanwhile
            if not entry.guards or guards.failing(entry.guards) is None:
                return entry
        target = dataclasses.replace(target, number=len(self) + 1)
        by_values = rebinding.values_key(args, kwargs, target.instance, target.training)
        known = set(self.effect_places)
        with gc_paused():  # one pause: a collection between tracing and compiling costs
            traced = trace(target, args, kwargs)
            entry = Entry(traced)
        if target.spec.bind(traced.effects.bound):  # (keyed by identity from now on)
            key = target.spec.key(args, kwargs, target.instance, target.training)[0]
        if by_values is not None:
            fresh = {id(o) for o in by_values[1]} - self._traced_objs
            self._traced_objs.update(id(o) for o in by_values[1])
            if rebinding.by_identity(key):
                self._index(target, entry, by_values, known, fresh)
        entry.trace_number = self.traces + 1  # (and why it was traced: for `d2s report`)
        entry.previous_key, entry.changed = self._last_key, changed
        if entry.new_places:  # programs traced before may write it unseen: not reused
            entries.clear()
            self._count = 0
            self._by_values = {k: [e for e in lst if e is entry] for k, lst in
                               self._by_values.items() if entry in lst}
        self._keep(key, entry)
        self.traces += 1
        self._tell_retrace(target, key, changed)
        return entry

    def _index(self, target, entry, by_values, known, fresh) -> None:
        """Make `entry` found by the values of its arguments (`rebinding.py`) where its
        argument objects are reachable through the arguments only (`fresh`: the ids of
        those no earlier trace was passed)."""
        vkey, objs, opaque = by_values
        clean = rebinding.walked(target, objs, opaque)
        if clean is None:
            return
        rebinding.prepare(entry, objs, clean)
        if entry.new_places:  # (places of fresh argument objects are not new to others)
            entry.new_places = rebinding.new_places(
                entry.effects.writes if entry.effects is not None else (), known, fresh)
        self._by_values[vkey] = [entry, *self._by_values.get(vkey, ())]

    def _rebound(self, target, args, kwargs):
        """An entry traced for other objects of the same structure and values as this
        call's arguments, made for this call's objects (`rebinding.rebind`), or None."""
        found = rebinding.values_key(args, kwargs, target.instance, target.training)
        if found is None:
            return None
        for entry in self._by_values.get(found[0], ()):
            clone = rebinding.rebind(entry, found[1])
            if clone is not None and (clone.check is None or _holds(clone.check)):
                return clone
        return None

    def _keep(self, key, entry) -> None:
        """Store `entry` under `key`, the least recently used programs out past `max_size`."""
        entries = self._entries
        # lists are replaced, never changed in place: `find` reads them without the lock
        entries[key] = [entry, *entries.get(key, ())]
        entries.move_to_end(key)
        self._count += 1
        program = entry.concrete.main_program
        if program.hookless:  # (a step's backward ran without a hook its leaves get later)
            leaf_hooks.watch(program, _dropper(self, key, entry))
        while self._count > max(1, self.max_size):
            oldest = next(iter(entries))
            lst = entries[oldest]
            self._count -= 1
            if len(lst) > 1:
                entries[oldest] = lst[:-1]
            else:
                del entries[oldest]
            self._forget(lst[-1])

    def drop(self, key, entry) -> None:
        """Forget `entry` (traced again at the next call that would take it)."""
        with self._lock:
            lst = self._entries.get(key, ())
            if any(e is entry for e in lst):
                rest = [e for e in lst if e is not entry]
                if rest:
                    self._entries[key] = rest
                else:
                    del self._entries[key]
                self._count -= 1
                self._forget(entry)
            entry.fast = None
            if self.last_entry is entry:
                self.last_entry = None

    def _forget(self, entry) -> None:
        """An entry out of the cache is not found by its arguments' values either."""
        for k, lst in list(self._by_values.items()):
            if entry in lst:
                rest = [e for e in lst if e is not entry]
                if rest:
                    self._by_values[k] = rest
                else:
                    del self._by_values[k]

    def _tell_retrace(self, target: TraceTarget, key, changed) -> None:
        """Log a retrace (at verbosity 1), and warn after RETRACE_WARNING traces and again
        each time the count doubles, naming what changed between the last two traces."""
        guard = None if changed is None else guards.describe(changed)
        name, names = target.qualname, target.spec.arg_names
        if self.traces > 1 and logging_utils.verbosity() >= 1:
            why = "; ".join(retrace_diffs(names, self._last_key, key, guard)) or \
                "the argument structure changed"
            logging_utils.log(1, f"retraced {name} (trace {self.traces}): {why}")
        n, rest = divmod(self.traces, RETRACE_WARNING)
        if rest or n == 0 or n & (n - 1):  # warn at 5, 10, 20, 40, ... traces
            return
        diffs = retrace_diffs(names, self._last_key, key, guard)
        warnings.warn(
            f"d2s: {name} has been traced {self.traces} times (one program per input "
            f"signature; at most {self.max_size} are kept). Between the last two "
            f"traces: {'; '.join(diffs) or 'the argument structure'}. Use InputSpec with None "
            "for dims that vary, or pass changing Python values as tensors.", stacklevel=4)

    def concrete_programs(self) -> list[ConcreteProgram]:
        """The programs kept, least recently used first (as Paddle's
        `program_cache.concrete_programs()`)."""
        return [entry.concrete for entries in list(self._entries.values())
                for entry in reversed(entries)]

    def last(self) -> tuple:
        """(cache key, ConcreteProgram) of the latest call, as Paddle's
        `program_cache.last()`; a RuntimeError before the first call."""
        entry = self.last_entry
        if entry is None:
            raise RuntimeError("the program cache is empty: the function has not been called "
                               "(or traced through get_concrete_program) yet")
        return self._last_key, entry.concrete

    def latest(self) -> tuple:
        """(the latest call's key, its Entry): `put_back` restores them after a lookup that
        is not a call (`save_spec`'s retrace for any batch size)."""
        return self._last_key, self.last_entry

    def put_back(self, latest: tuple) -> None:
        self._last_key, self.last_entry = latest

    def lookup(self, target: TraceTarget, args, kwargs):
        """The entry for this call of `target` (traced if needed)."""
        return self.find(target, args, kwargs)[0]


# every ProgramCache, so that a forked child can free their locks (`_unlock_in_child`)
_CACHES: weakref.WeakSet = weakref.WeakSet()


def _unlock_in_child() -> None:
    """A fork while another thread traces copies that function's lock held by a thread the
    child does not have: every call of the function in the child would wait for ever. The
    child gets free locks (a trace stores its program only when it is done, so nothing
    half-made is left behind)."""
    for cache in list(_CACHES):
        cache._lock = threading.RLock()


os.register_at_fork(after_in_child=_unlock_in_child)


def _holds(check) -> bool:
    try:
        return check()
    except Exception:  # noqa: BLE001  (an emptied closure cell, an odd __eq__: not the same)
        return False


def _dropper(cache: ProgramCache, key, entry):
    """`cache.drop(key, entry)` while both live: a tensor a whole training step differentiates
    without hooks got one (`runtime/program/leaf_hooks.py`)."""
    caches, entries = weakref.ref(cache), weakref.ref(entry)

    def forget():
        c, e = caches(), entries()
        if c is not None and e is not None:
            c.drop(key, e)
    return forget


def has_hooks(layer) -> bool:
    return bool(getattr(layer, "_forward_pre_hooks", None)
                or getattr(layer, "_forward_post_hooks", None))


def build_program(target: TraceTarget, args, kwargs,
                  with_hooks: bool = False) -> ConcreteProgram:
    """Trace a call of `target` into a ConcreteProgram (not cached)."""
    traced = trace(target, args, kwargs, with_hooks, state=False)
    outs = [v for v in traced.leaves if isinstance(v, Variable)]
    params = [t for t in traced.program.tensors.values() if not t.stop_gradient]
    return ConcreteProgram(traced.program, traced.feeds, outs, params)


def retrace_diffs(arg_names, previous, key, guard=None) -> list[str]:
    """What changed between the cache keys of two traces (or the guard that failed), the
    arguments named by `arg_names` (the function's parameters)."""
    diffs = [f"{guard} changed"] if guard is not None else []
    if guard is None and previous is not None and len(previous) == len(key):
        for i, (x, y) in enumerate(zip(previous[:-1], key[:-1])):
            if x != y:
                what = f"argument {arg_names[i]!r}" if len(previous) - 1 == len(arg_names) \
                    and i < len(arg_names) else f"argument leaf {i}"
                diffs.append(f"{what}: {describe_key_part(x)} -> {describe_key_part(y)}")
        if previous[-1] != key[-1] and _written_objects(key[-1]):
            diffs.append("a list or dict argument the program writes in is another object")
        elif previous[-1] != key[-1]:
            diffs.append("the instance, its training flag, auto_cast or the keyword names")
    return diffs


def _written_objects(part) -> bool:
    """The key part of the objects a program writes in (`FunctionSpec._written`)."""
    return type(part) is tuple and bool(part) and all(type(p) is _Identity for p in part)


def describe_key_part(part) -> str:
    """A key part as the user knows it: a tensor's shape and dtype, or a Python value."""
    if len(part) == 3 and isinstance(part[0], tuple):
        return f"tensor {list(part[0])} {part[1]}"
    if len(part) == 2 and isinstance(part[0], type):
        value = part[1]
        value = value() if isinstance(value, weakref.ref) else value
        text = repr(value)
        return f"{part[0].__name__} {text if len(text) <= 40 else text[:37] + '...'}"
    return str(part)
