"""Guards: the Python values a trace read from outside its arguments, checked on every call.

A converted function runs its Python once, while tracing; what it read from outside its
arguments (attributes of `self` and of objects reached from it, module globals, closure
variables, fields of config objects) is baked into the program. While tracing, each user
function that runs records those reads (which ones: `pyct/reads.py`, from its source); the
program keeps them, and a call whose values differ traces a new program instead of reusing one
built for other values.

What is guarded, per value read:
- a Python value (number, string, bool, None, bytes, an enum, a tuple or frozenset of those):
  by type and value;
- a tensor: by identity (the program reads the very tensor object it captured, so an
  attribute rebound to another tensor, or from `None` to a tensor, needs another program;
  tensors updated in place, such as parameters and BatchNorm statistics, keep theirs);
- objects (Layers, modules, functions, config objects): by identity, and the chain goes on
  into their instance attributes (`self.cfg.depth`).
Only values found in an object's own `__dict__` (or a Layer's buffers), a module's globals or
a closure cell are read: no property or `__getattr__` runs while guarding.
"""
from __future__ import annotations

import enum
import threading
import types

from runtime.core import is_eager_tensor

_MISSING = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()
MISSING = _MISSING  # a place that holds nothing (an attribute or key not set)
_SCALARS = frozenset((int, float, bool, str, bytes, complex, type(None)))
_PASS = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
         types.MethodType)


class _Recording(threading.local):
    def __init__(self):
        self.guards = None  # the list being filled by the trace running in this thread
        self.seen = None


_REC = _Recording()


def is_data(value) -> bool:
    cls = value.__class__
    if cls in _SCALARS or isinstance(value, enum.Enum):
        return True
    if cls is tuple or cls is frozenset:
        return len(value) <= 16 and all(is_data(v) for v in value)
    return False


def _is_tensor(value) -> bool:
    return is_eager_tensor(value)


class recording:
    """While tracing: collect the guards of every user function that runs (a context)."""

    def __enter__(self):
        self.outer = (_REC.guards, _REC.seen)
        _REC.guards, _REC.seen = [], set()
        return self

    def __exit__(self, *exc):
        self.guards = tuple(_REC.guards)
        _REC.guards, _REC.seen = self.outer
        return False


def record(fn, reads, instance=None) -> None:
    """Record the guards for `reads` (a `pyct.reads.Reads` of `fn`) as `fn` starts running,
    with `instance` bound to its first parameter (None for a plain function)."""
    guards = _REC.guards
    if guards is None or reads is None:
        return
    seen = _REC.seen
    key = (id(fn), id(instance))
    if key in seen:
        return
    seen.add(key)
    glob = fn.__globals__
    cells = {}
    if fn.__closure__:
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__))
    for name in reads.names:
        cell = cells.get(name)
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            _add(guards, ("cell", cell, name), value)
        elif name in glob:
            _add(guards, ("global", glob, name), glob[name])
    for chain in reads.chains:
        root = chain[0]
        if root == reads.self_name:
            if instance is None:
                continue
            obj, where = instance, "self"
        elif root in cells:
            try:
                obj = cells[root].cell_contents
            except ValueError:
                continue
            where = root
        elif root in glob:
            obj, where = glob[root], root
        else:
            continue
        for attr in chain[1:]:
            if isinstance(attr, tuple):  # a constant key of a dict (`FLAGS["debug"]`)
                if type(obj) is not dict:
                    break
                value = obj.get(attr[0], _MISSING)
                path = f"{where}[{attr[0]!r}]"
                place = ("item", obj, attr[0], path)
            else:
                value = _lookup(obj, attr)
                path = f"{where}.{attr}"
                place = ("attr", obj, attr, path)
            if value is _MISSING:
                break
            _add(guards, place, value)
            if is_data(value) or _is_tensor(value) or isinstance(value, _PASS):
                break
            obj, where = value, path


def _lookup(obj, attr):
    """`obj.attr` from the object's own storage (never a property or `__getattr__`)."""
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict):
        return _MISSING
    value = d.get(attr, _MISSING)
    if value is _MISSING:
        buffers = d.get("_buffers")  # a Layer's tensors assigned as attributes
        if isinstance(buffers, dict):
            value = buffers.get(attr, _MISSING)
    return value


def value_guard(place: tuple, value) -> tuple:
    """The guard that `place` still holds `value` (by value for data, else by identity)."""
    if is_data(value):
        return (place, "eq", (value.__class__, value))
    return (place, "is", value)


def _add(guards: list, place: tuple, value) -> None:
    if is_data(value):
        guards.append((place, "eq", (value.__class__, value)))
    elif place[0] == "attr" and isinstance(value, _PASS):
        return
    elif place[0] == "attr" or not isinstance(value, _PASS):
        guards.append((place, "is", value))


def _current(place):
    kind = place[0]
    if kind == "cell":
        try:
            return place[1].cell_contents
        except ValueError:
            return _MISSING
    if kind in ("global", "item"):
        return place[1].get(place[2], _MISSING) if isinstance(place[1], dict) else _MISSING
    if kind == "list":
        return place[1]
    return _lookup(place[1], place[2])


def _same_items(lst, items) -> bool:
    """The list holds these items: the same objects, or equal values of the same type."""
    return len(lst) == len(items) and all(
        a is b or is_data(b) and a.__class__ is b.__class__ and a == b
        for a, b in zip(lst, items))


def compile_check(guards):
    """One function `check() -> bool` that is True when every guard holds: a single
    expression with the dicts and expected values bound as constants, so a call with 50
    guards checks them without a Python call per guard."""
    if not guards:
        return None
    env = {"_M": _MISSING, "_same": _same_items}
    terms = []
    for i, (place, how, expected) in enumerate(guards):
        kind = place[0]
        if kind == "cell":
            env[f"c{i}"] = place[1]
            read = f"c{i}.cell_contents"
        elif kind == "list":
            env[f"c{i}"] = place[1]
            read = f"c{i}"
        else:
            if kind in ("global", "item"):
                store, name = place[1], place[2]
            else:
                d = getattr(place[1], "__dict__", None)
                name = place[2]
                store = d if isinstance(d, dict) and name in d else (
                    d.get("_buffers") if isinstance(d, dict) else None)
                if not isinstance(store, dict):
                    store = {}
            env[f"d{i}"] = store
            read = f"d{i}.get({name!r}, _M)"
        if how == "eq":
            env[f"t{i}"], env[f"x{i}"] = expected
            terms.append(f"((v := {read}).__class__ is t{i} and v == x{i})")
        elif how == "type":
            env[f"x{i}"] = expected
            terms.append(f"{read}.__class__ is x{i}")
        elif how == "items":
            env[f"x{i}"] = expected
            terms.append(f"_same({read}, x{i})")
        else:
            env[f"x{i}"] = expected
            terms.append(f"{read} is x{i}")
    source = "lambda: " + " and ".join(terms)
    return eval(compile(source, "<d2s guards>", "eval"), env)  # noqa: S307  (our own text)


def failing(guards) -> tuple | None:
    """The first guard that no longer holds, or None when the program still applies."""
    for guard in guards:
        place, how, expected = guard
        value = _current(place)
        if how == "eq":
            if value.__class__ is not expected[0] or value != expected[1]:
                return guard
        elif how == "type":
            if value.__class__ is not expected:
                return guard
        elif how == "items":
            if not _same_items(value, expected):
                return guard
        elif value is not expected:
            return guard
    return None


def describe(guard) -> str:
    """The guarded place, as the user wrote it (`self.mode`, global `DEBUG`)."""
    place = guard[0]
    if place[0] == "attr":
        return place[3]
    if place[0] == "global":
        return f"global {place[2]}"
    if place[0] in ("item", "list"):
        return place[3]
    return f"closure variable {place[2]}"
