"""One program for every call passing fresh containers of the same structure and values.

A program that writes into an argument (`metrics["n"] = metrics.get("n", 0) + 1`,
`state.step += 1`, `log.append(v)`) is tied to the objects its trace was passed: its slots,
guards, write-back places and replayed effects name them. Such arguments are keyed by identity
(`function_spec.py`), so a caller passing a fresh `metrics = {}` each step would trace on every
call. Here a program is also found by the *values* of its arguments: the containers and plain
objects reachable from them (lists, dicts, tuples, sets, dataclass instances, SimpleNamespaces,
instances of plain user classes (`plain_object`), at any depth) walked into a key of their
types, keys, Python values, tensor shapes and which of them are one object (`values_key`),
taken before the trace. A later call whose arguments
give the same key would trace the same program with its own objects in place of the trace's:
`rebind` makes that program's `Entry` for this call, the trace's objects replaced by the call's
ones in its guards (compiled again), slots, write-back places, fed numbers and replayed
effects, so each call's own objects are read and written, never an earlier call's.

A program is not found this way (it stays keyed by identity, as before) when one of its
argument containers is also reachable from elsewhere (the instance, a global, a closure, an
object passed in that is not walked): a write through that other path would still go to the
trace's object. A call whose objects the program names elsewhere (`self.last` holds the dict
this call passes) is not given the program either: it traces.
"""
from __future__ import annotations

import dataclasses
import enum
import gc
import types
import weakref

from runtime.core import TensorBase

from .call_policy import ignored_module
from .function_spec import (
    _NDARRAY,
    TENSOR_CLASSES,
    _Identity,
    _WeakIdentity,
    amp_key,
    default_dtype_key,
    value_key,
)
from .operators import mutation
from .operators.mutation import _LIMIT as _WALK_LIMIT
from .side_effects import Appended

_SCALARS = frozenset((int, float, bool, str, bytes, complex, type(None)))
_DEPTH = 8


class _GiveUp(Exception):
    """The arguments are too deep (or odd) to key by value: keyed by identity only."""


class _Walk:
    """Walks the arguments into a key; `objs`: the mutable objects met, in walk order;
    `opaque`: objects keyed by identity (their insides are not walked)."""

    def __init__(self):
        self.objs: list = []
        self.opaque: list = []
        self.seen: dict = {}

    def key(self, x, fed: bool, depth: int):
        cls = x.__class__
        if cls in _SCALARS:
            return (cls, x)
        at = self.seen.get(id(x))
        if at is not None:
            return ("same", at)
        if depth > _DEPTH:
            raise _GiveUp
        if cls in TENSOR_CLASSES or isinstance(x, TensorBase) or cls is _NDARRAY:
            self.seen[id(x)] = len(self.seen)
            if not fed:  # (a tensor in an object's attribute: the program captured it)
                self.opaque.append(x)
                return ("tensor", id(x))
            return ("tensor", tuple(x.shape), str(x.dtype), getattr(x, "stop_gradient", True))
        if cls is tuple or isinstance(x, tuple):
            return (cls, tuple(self.key(v, fed, depth + 1) for v in x))
        if cls is list or cls is dict or cls is set or cls is types.SimpleNamespace or (
                dataclasses.is_dataclass(x) and not isinstance(x, type)):
            self.seen[id(x)] = len(self.seen)
            self.objs.append(x)
            if cls is list:
                return (list, tuple(self.key(v, fed, depth + 1) for v in x))
            if cls is dict:
                return (dict, tuple((k, self.key(v, fed, depth + 1)) for k, v in x.items()))
            if cls is set:
                return value_key(x)
            if cls is types.SimpleNamespace:
                return (cls, tuple((k, self.key(v, False, depth + 1))
                                   for k, v in vars(x).items()))
            return self._dataclass(x, fed, depth)
        if isinstance(x, (list, dict, set)):  # (a subclass: its own rules may read more)
            raise _GiveUp
        if plain_object(x):  # (`class Box: pass`, a fresh one per call: as a SimpleNamespace)
            self.seen[id(x)] = len(self.seen)
            self.objs.append(x)
            return (cls, tuple((k, self.key(v, False, depth + 1)) for k, v in vars(x).items()))
        self.opaque.append(x)
        return value_key(x)

    def _dataclass(self, x, fed, depth):
        names = tuple(f.name for f in dataclasses.fields(x))
        own = getattr(x, "__dict__", None)
        extra = tuple((k, self.key(v, False, depth + 1)) for k, v in (own or {}).items()
                      if k not in names)
        return (x.__class__, tuple((n, self.key(getattr(x, n), fed, depth + 1))
                                   for n in names), extra)


_OBJECT_HOOKS = ("__eq__", "__hash__", "__getattribute__", "__setattr__", "__delattr__")
_PLAIN: dict = {}  # class -> whether its instances are plain objects


def plain_object(x) -> bool:
    """`x` is an instance of a plain user class: compared by identity, its state all in its
    `__dict__` (no `__slots__`, no `__getattr__` and no attribute hooks), not the library's
    (a Layer, an optimizer) and not an enum: walked as a SimpleNamespace is, so a fresh
    object per call with the same field values finds the program traced for an earlier one."""
    cls = x.__class__
    found = _PLAIN.get(cls)
    if found is None:
        module = getattr(cls, "__module__", None)
        found = _PLAIN[cls] = isinstance(getattr(x, "__dict__", None), dict) and not \
            isinstance(x, (type, enum.Enum, types.ModuleType, types.FunctionType,
                           types.MethodType, BaseException)) and \
            all(getattr(cls, h, None) is getattr(object, h) for h in _OBJECT_HOOKS) and \
            not hasattr(cls, "__getattr__") and \
            not any("__slots__" in vars(c) for c in cls.__mro__[:-1]) and \
            not ignored_module(module)
    return found


def values_key(args, kwargs, instance, training):
    """(key, mutable objects in walk order, opaque objects) of a call, or None when its
    arguments hold no mutable object or cannot be keyed by value."""
    if not kwargs and all(a.__class__ in _SCALARS or a.__class__ in TENSOR_CLASSES
                          for a in args):
        return None  # (tensors and Python scalars only: the common call, kept cheap)
    walk = _Walk()
    try:
        parts = tuple(walk.key(a, True, 0) for a in args)
        named = tuple((k, walk.key(kwargs[k], True, 0)) for k in sorted(kwargs))
        key = (parts, named, id(instance), training, amp_key(), default_dtype_key())
        hash(key)
    except (_GiveUp, TypeError, RecursionError):
        return None
    if not walk.objs:
        return None
    return key, tuple(walk.objs), walk.opaque


def by_identity(key) -> bool:
    """Whether a cache key holds an object by identity (else a call passing fresh objects
    equal to these finds the program by its key already)."""
    stack = [key]
    while stack:
        part = stack.pop()
        if type(part) is tuple:
            stack.extend(part)
        elif isinstance(part, (_Identity, _WeakIdentity, weakref.ref)):
            return True
    return False


def walked(target, objs, opaque):
    """The ids of what the function reaches besides its arguments (its instance, closure,
    the globals it names) and of what the argument objects that are not walked (`opaque`)
    reach, or None where one of the argument objects `objs` is among them (or the walk was
    cut short)."""
    log = mutation.Log([target.eager], list(opaque), [f"opaque {i}" for i in range(
        len(opaque))], None, track_variables=False)
    if len(log.seen) >= _WALK_LIMIT:  # (not walked to the end: maybe reachable)
        return None
    seen = {k[1] if type(k) is tuple else k for k in log.seen}  # (("globals", id): a
    if any(id(o) in seen for o in objs):                         # module's, by name)
        return None
    return seen


# ---- making an Entry for other objects ----------------------------------------------------

_ENTRY_LISTS = ("leaves", "numbers", "rebound")  # (and `guards`, `raises`, `tree`, `effects`)
# attributes of d2s objects that hold d2s's own lists and dicts (of slots, places, plans)
_OWN = frozenset(("slots", "types", "writes", "numbers", "rebound", "renewed", "orders",
                  "guards", "raises", "places", "tail", "plans", "made", "arg_writes",
                  "leaves", "kept"))


class _Sub:
    """Replaces objects by id (`swap`: id -> (old, new)); copies only what changes (`dirty`
    gets the ids of the objects copied; with `only`, the dirty ids of an earlier walk that
    replaced every argument object, the others are kept without a look). `fixed` gets the
    ids of the user objects met that are not replaced; `unknown` the objects of other
    classes (not walked into)."""

    def __init__(self, swap: dict, only=None, templates=frozenset()):
        self.swap, self.only, self.templates = swap, only, templates
        self.memo: dict = {}
        self.fixed: set = set()
        self.dirty: set = set()
        self.unknown: list = []

    def __call__(self, x):
        got = self.swap.get(id(x))
        if got is not None and got[0] is x:
            return got[1]
        if self.only is not None and id(x) not in self.only:
            return x
        cls = x.__class__
        if cls in _SCALARS or isinstance(x, (type, types.FunctionType, types.ModuleType,
                                             types.BuiltinFunctionType, TensorBase)):
            return x
        done = self.memo.get(id(x))
        if done is not None:
            return done[1]
        out = self._copy(x, cls)
        self.memo[id(x)] = (x, out)
        if out is not x:
            self.dirty.add(id(x))
        return out

    def _copy(self, x, cls):
        module = getattr(cls, "__module__", "") or ""
        if isinstance(x, tuple):
            items = [self(v) for v in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return cls(*items) if hasattr(cls, "_fields") else cls(items)
        if module.startswith("d2s."):
            return self._object(x, cls)
        if id(x) in self.templates:  # (a list or dict the trace made: made anew per call)
            items = {k: self(v) for k, v in (x.items() if cls is dict else enumerate(x))}
            if all(items[k] is v for k, v in (x.items() if cls is dict else enumerate(x))):
                return x
            return items if cls is dict else [items[i] for i in range(len(x))]
        if module.startswith("runtime."):  # (Variables, programs: never user objects)
            return x
        if cls in (list, dict, set) or isinstance(x, (list, dict, set)) or hasattr(
                x, "__dict__"):
            self.fixed.add(id(x))
        self.unknown.append(x)
        return x

    def _object(self, x, cls):
        """A d2s object (a slot, a write-back place, a list subclass of its own): a copy
        with its attributes (and items) replaced, or `x` where nothing changes."""
        changed = False
        items = None
        if isinstance(x, list):
            items = [self(v) for v in x]
            changed = any(a is not b for a, b in zip(items, x))
        elif isinstance(x, dict):
            items = {k: self(v) for k, v in x.items()}
            changed = any(items[k] is not v for k, v in x.items())
        attrs = {}
        for name in _slot_names(cls):
            if hasattr(x, name):
                attrs[name] = self._attr(name, getattr(x, name))
        own = getattr(x, "__dict__", None)
        own_new = {k: self._attr(k, v) for k, v in own.items()} if own else None
        changed = changed or any(attrs[n] is not getattr(x, n) for n in attrs) or (
            own_new is not None and any(own_new[k] is not v for k, v in own.items()))
        if not changed:
            return x
        new = cls.__new__(cls)
        if items is not None:
            (list if isinstance(x, list) else dict).__init__(new, items)
        for name, v in attrs.items():
            object.__setattr__(new, name, v)
        if own_new is not None:
            new.__dict__.update(own_new)
        return new

    def _attr(self, name, v):
        """An attribute of a d2s object: those named in `_OWN` are d2s's own lists and
        dicts (copied when an item changes; `types`, ident -> type, re-keyed by the replaced
        ids); the others are values (`Slot.obj`, a user's object)."""
        if name not in _OWN or type(v) is not list and type(v) is not dict:
            return self(v)
        if self.only is not None and id(v) not in self.only:
            return v
        if type(v) is list:
            out = [self(x) for x in v]
            same = all(a is b for a, b in zip(out, v))
        else:
            out = {self._ident(k): self(x) for k, x in v.items()}
            same = all(a is b for a, b in zip(out.values(), v.values())) and list(out) == list(v)
        if same:
            return v
        self.dirty.add(id(v))
        return out

    def _ident(self, k):
        if type(k) is tuple and len(k) == 3 and type(k[0]) is int:
            got = self.swap.get(k[0])
            if got is not None:
                return (id(got[1]), k[1], k[2])
        return k


def _slot_names(cls) -> list:
    names = _SLOT_NAMES.get(cls)
    if names is None:
        names = []
        for c in cls.__mro__:
            s = c.__dict__.get("__slots__", ())
            names.extend([s] if isinstance(s, str) else s)
        _SLOT_NAMES[cls] = names
    return names


_SLOT_NAMES: dict = {}


def _swap(old_objs, new_objs) -> dict:
    swap = {}
    for o, n in zip(old_objs, new_objs, strict=True):
        if o is n:
            continue
        swap[id(o)] = (o, n)
        if type(o) is not dict and type(o) is not list and type(o) is not set:
            d, e = getattr(o, "__dict__", None), getattr(n, "__dict__", None)
            if isinstance(d, dict) and isinstance(e, dict):
                swap[id(d)] = (d, e)  # (a dict of attributes: `vars(obj)` in key orders)
    return swap


def prepare(entry, objs: tuple, clean) -> None:
    """Make `entry` (traced with the argument objects `objs`, which hold what they held
    before the call) ready for `rebind`: a walk replacing every argument object finds what
    holds them (`rebind_plan`) and whether objects of other classes it holds, but those
    `walked` found (`clean`: ids), reach them (then it is never rebound: `rebind_safe`)."""
    entry.bindings, entry.rebound_last = objs, None
    templates = _templates(entry.effects) if entry.effects is not None else frozenset()
    sub = _Sub(_swap(objs, tuple(types.SimpleNamespace() for _ in objs)), None, templates)
    _substituted(entry, sub)
    ids = {id(o) for o in objs} | {id(vars(o)) for o in objs if isinstance(
        getattr(o, "__dict__", None), dict)}
    entry.rebind_safe = not _reaches([u for u in sub.unknown if id(u) not in ids and
                                      id(u) not in clean], ids)
    entry.rebind_plan = (frozenset(sub.dirty), frozenset(sub.fixed), templates)


def _templates(effects) -> frozenset:
    """Ids of the lists and dicts the trace made in the values it stores after each call
    (`side_effects._fresh`: made anew from them per call), where argument objects are
    replaced too."""
    out = set()

    def walk(x, plan):
        if plan is None or plan[1] is None or type(x) not in (list, dict):
            return
        out.add(id(x))
        for k, v in (x.items() if type(x) is dict else enumerate(x)):
            walk(v, plan[1].get(k))
    for (_, value), plan in zip(effects.writes, effects.plans or [None] * len(
            effects.writes), strict=True):
        for x, p in zip(value, value.plans) if isinstance(value, Appended) else ((value, plan),):
            walk(x, p)
    return frozenset(out)


def _substituted(entry, sub: _Sub) -> dict:
    """The attributes of `entry` that name objects, `sub` applied."""
    out = {name: sub._attr(name, getattr(entry, name)) for name in _ENTRY_LISTS}
    out["guards"] = sub._attr("guards", entry.guards)
    out["raises"] = sub._attr("raises", entry.raises)
    out["tree"] = sub(entry.tree)
    out["owned"] = sub(entry.owned)  # (the caller's objects the result holds)
    if entry.effects is not None:
        out["effects"] = sub(entry.effects)
    return out


def rebind(entry, objs: tuple):
    """`entry` for a call passing `objs` (in the walk order of its `bindings`), or None
    where it cannot serve them."""
    last = entry.rebound_last
    if last is not None and len(last[0]) == len(objs) and all(
            a is b for a, b in zip(last[0], objs)):
        return last[1]
    swap = _swap(entry.bindings, objs)
    if not swap:
        return entry
    walk, fixed, templates = entry.rebind_plan  # (ids to walk, of the user objects it names)
    if not entry.rebind_safe or any(id(n) in fixed for _, n in swap.values()):
        return None  # (the program names this call's object elsewhere: trace it)
    sub = _Sub(swap, walk, templates)
    clone = entry.__class__.__new__(entry.__class__)
    clone.__dict__.update(entry.__dict__)
    clone.__dict__.update(_substituted(entry, sub))
    clone.check = _check(entry.check, sub) if clone.guards is not entry.guards else \
        entry.check
    clone.fast, clone.slow_calls, clone.rebound_last = None, 0, None
    clone._build_training = lambda: entry._training or entry._build_training()
    entry.rebound_last = (objs, clone)
    return clone


def _check(check, sub: _Sub):
    """The entry's compiled guard check (`guards.compile_check`) reading the call's objects:
    its code, with the objects it binds by name replaced."""
    env = check.__globals__
    new = {k: v if k.startswith("__") else sub(v) for k, v in env.items()}
    return types.FunctionType(check.__code__, new)


def _reaches(objs: list, ids: set) -> bool:
    stack = [(o, 0) for o in objs]
    seen = set()
    while stack:
        o, depth = stack.pop()
        if id(o) in seen or depth > 4:
            continue
        seen.add(id(o))
        for r in gc.get_referents(o):
            if id(r) in ids:
                return True
            if isinstance(r, (list, tuple, dict, set)) or hasattr(r, "__dict__") and not \
                    isinstance(r, (type, types.ModuleType, types.FunctionType)):
                stack.append((r, depth + 1))
    return False


def new_places(writes, known_before: set, fresh: set) -> bool:
    """Whether a trace's writes name a place no earlier trace changed, places of `fresh`
    argument objects (no earlier trace was passed them) aside: earlier programs serve them
    only through `rebind`, on calls starting from the same values, where their traces saw
    every change."""
    known_objs = {ident[0] for ident in known_before}
    return any(s.ident() not in known_before and (
        id(s.obj) not in fresh or id(s.obj) in known_objs) for s, _ in writes)
