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
  tensors updated in place, such as parameters and BatchNorm statistics, keep theirs); a
  place the program reads and rebinds itself (`self.ema = self.ema * 0.9 + ...`) by the
  shape and dtype of its tensor, which is fed (`writeback_fed.Fed`);
  and where the trace read its value as Python (`int(self.step)`, `self.step.item()`,
  `if self.initialized:`), which the program has baked in: by value too (`value_read`), so a
  value changed in place, by the caller or by the converted call itself, traces a new program;
- objects (Layers, functions, classes, config objects): by identity, and the chain goes on
  into their instance attributes (`self.cfg.depth`); a called one too (`self.fc(x)`,
  `ACT(x)` with `ACT = rt.tanh`), so a swapped layer or activation needs another program.
  Modules are not rebound in practice, and the library's own names (`rt.tanh`) are not
  guarded.
An object of a user class the trace made (`constructor`) is made anew on every call: its own
fields are not guarded, the objects they hold are.
Only values found in an object's own `__dict__` (or a Layer's buffers), a module's globals or
a closure cell are read: no property or `__getattr__` runs while guarding. A property of a
user class (`self.factor`) ran unconverted while tracing, so what its getter reads is guarded
instead, as if the getter had been called from converted code.
"""
from __future__ import annotations

import enum
import inspect
import os
import threading
import types

from runtime import backend, pytree
from runtime.core import active_builder, array_of, is_eager_tensor, watch_value_reads

from .call_policy import ignored_module
from .errors import ConversionError
from .guard_steps import LISTS, STEPS, deque_items, record_step
from .pyct import parser
from .pyct.reads import APPENDS, Probe, outside_reads
from .pyct.self_reads import attribute_reads

_MISSING = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()
MISSING = _MISSING  # a place that holds nothing (an attribute or key not set)
_SCALARS = frozenset((int, float, bool, str, bytes, complex, type(None)))
_PASS = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
         types.MethodType)


class _Recording(threading.local):
    def __init__(self):
        self.guards = None  # the list being filled by the trace running in this thread
        self.seen = None
        self.passed = None  # ids of the objects the traced call was passed (`passed_in`)
        self.made = None  # id -> object, for the objects of user classes the trace made


_REC = _Recording()


def is_data(value) -> bool:
    cls = value.__class__
    if cls in _SCALARS or isinstance(value, enum.Enum):
        return True
    if cls is tuple or cls is frozenset:
        return len(value) <= 16 and all(is_data(v) for v in value)
    return False


def recorded():
    """The guard records of the trace running in this thread (d2s's own list), or None."""
    return _REC.guards


class recording:
    """While tracing: collect the guards of every user function that runs (a context)."""

    def __enter__(self):
        self.outer = (_REC.guards, _REC.seen, _REC.passed, _REC.made)
        _REC.guards, _REC.seen, _REC.passed, _REC.made = [], set(), set(), {}
        self.outer_hook = watch_value_reads(value_read)
        return self

    def __exit__(self, *exc):
        watch_value_reads(self.outer_hook)
        self.guards = tuple(_REC.guards)
        _REC.guards, _REC.seen, _REC.passed, _REC.made = self.outer
        return False


def value_read(tensor) -> None:
    """The trace reads an eager tensor's value as Python (`int(self.step)`, `float(G)`,
    `if self.initialized:`): the program has that value baked in, so it applies only while
    the tensor holds the same data. Guarded by a copy of its data, compared exactly on every
    call (a counter changed in place by the caller, an optimizer step or the converted call's
    own writeback traces a new program, as eager code would read the new value)."""
    builder = active_builder()
    if builder is not None and builder.wrote(tensor):
        raise ConversionError(
            f"the value of {_tensor_path(tensor)} is read as Python (`int()`, `float()`, "
            "`bool()`, `.item()`, `.numpy()`, an `if`) after the converted call changed it "
            "(`set_value`, `t[...] = v`, `+=`, or an assignment): the program computes the new "
            "value only when it runs, so this read would see the old one. Keep it in the "
            "computation (`x * self.step`, not `x * int(self.step)`), or read it before the "
            "change.")
    guards = _first_time(("value", id(tensor)))
    if guards is not None:
        guards.append((("whole", tensor, None, f"the value of {_tensor_path(tensor)}"), "data",
                       _data_of(tensor)))


def _tensor_path(tensor) -> str:
    """The tensor as the user's code names it (`self.step`), from the guard on its identity."""
    return next((describe(g) for g in _REC.guards or () if g[1] == "is" and g[2] is tensor),
                "a tensor the function captured")


def _data_of(tensor) -> tuple:
    array = array_of(tensor)
    return array.shape, array.dtype, backend.to_numpy(array).tobytes()


def _same_data(tensor, expected) -> bool:
    """`tensor` holds the data `_data_of` copied (bit for bit: a NaN equals itself)."""
    array = array_of(tensor)
    return array.shape == expected[0] and array.dtype == expected[1] and \
        backend.to_numpy(array).tobytes() == expected[2]


def tensor_like(value, expected) -> bool:
    """`value` is an eager tensor like `expected`, (shape, dtype[, stop_gradient]): a place's
    tensor the program reads and rebinds, a new Tensor each call (`writeback_fed.Fed`)."""
    if not is_eager_tensor(value):
        return False
    array = value._data
    return array.shape == expected[0] and array.dtype == expected[1] and (
        len(expected) < 3 or value.stop_gradient is expected[2])


def bind_arguments(fn, args, kwargs, instance=None) -> dict:
    """The parameter -> argument mapping of a call of `fn` (`instance` bound to its first
    parameter); {} where the arguments do not fit its signature (the call itself will say)."""
    try:
        sig = inspect.signature(fn)
        bound = sig.bind_partial(*((instance,) if instance is not None else ()), *args,
                                 **kwargs)
    except (TypeError, ValueError):
        return {}
    return dict(bound.arguments)


def passed_in(arguments: dict) -> None:
    """The traced call was passed these objects: what a called function reads through one of
    them (and a deque's items) is guarded too (not an object made while tracing)."""
    if _REC.passed is None:
        return
    deque_items(_REC.guards, arguments)
    for value in arguments.values():
        _REC.passed.add(id(value))
        if pytree.is_container(value):
            _REC.passed.update(id(v) for v in pytree.children(value)[0])


def constructor(cls: type):
    """What converted code calls for the user class `cls` while a trace records guards: `cls`,
    remembering the objects it makes. Such an object is made anew on every call, so the
    values its methods read from it (`self.scale` of a loss scaler made in the function) are
    not guarded: guarding them would compare the next call with the object this trace
    left, changed by the trace itself, and trace every call again."""
    if _REC.made is None or ignored_module(cls.__module__):
        return cls

    def make(*args, **kwargs):
        obj = cls(*args, **kwargs)
        _REC.made[id(obj)] = obj  # (kept alive while tracing: its id is not reused)
        return obj
    return make


def record(fn, reads, instance=None, arguments=None) -> None:
    """Record the guards for `reads` (a `pyct.reads.Reads` of `fn`) as `fn` starts running,
    with `instance` bound to its first parameter (None for a plain function) and `arguments`
    (parameter -> value) the objects it was passed, where what it reads through them is
    guarded (`cfg.scale` of `def f(x, cfg)`): by value, so the caller changing a field
    between calls traces a new program, as eager code would read the new value."""
    guards = _REC.guards
    if guards is None or reads is None:
        return
    seen = _REC.seen
    passed = _REC.passed
    known = passed | {id(g[2]) for g in guards if g[1] == "is"}  # (`helper(x, self.opts)`)
    arguments = {k: v for k, v in (arguments or {}).items()
                 if k in reads.params and id(v) in known and not is_eager_tensor(v)}
    key = (id(fn), id(instance), tuple(sorted((k, id(v)) for k, v in arguments.items())))
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
            _add(guards, ("cell", cell, name), value, items=name not in reads.appended)
        elif name in glob:
            _add(guards, ("global", glob, name), glob[name], items=name not in reads.appended)
    for chain in reads.chains:
        found = _chain_root(chain[0], reads, instance, arguments, cells, glob)
        if found is None:
            continue
        obj, where = found
        if obj is os.environ or obj is os.getenv or obj is os and len(chain) > 1 and \
                chain[1] in _ENVIRON_READS:
            _record_environment()  # `os.environ.get("DEBUG")`, `os.getenv(...)`
            continue
        if isinstance(obj, types.ModuleType) and ignored_module(obj.__name__):
            continue  # `rt.tanh`, `np.pi`: the library's own names are not rebound
        made = obj is instance and _REC.made is not None and id(obj) in _REC.made
        _record_chain(guards, obj, where, chain[1:], made)


def _chain_root(root: str, reads, instance, arguments: dict, cells: dict, glob: dict):
    """(the object a read chain starts from, its name in guard paths), or None where the
    root is a local name (or an empty closure cell)."""
    if root == reads.self_name and instance is not None:
        return instance, "self"
    if root in arguments:
        return arguments[root], root
    if root == reads.self_name:
        return None
    if root in cells:
        try:
            return cells[root].cell_contents, root
        except ValueError:
            return None
    return (glob[root], root) if root in glob else None


def _record_chain(guards: list, obj, where: str, attrs, made: bool = False) -> None:
    """Guard each step of `obj.a.b` / `obj["k"]` down to a data value or a tensor; of an
    object the trace `made`, the steps after its own attributes (`constructor`)."""
    for i, attr in enumerate(attrs):
        if isinstance(attr, STEPS):  # (every item a `for` reads, every attribute)
            return record_step(guards, obj, where, attr, attrs[i + 1:], _record_chain, _add)
        attr, probe = (attr.name, True) if isinstance(attr, Probe) else (attr, False)
        if isinstance(attr, tuple):  # a constant key of a dict (`FLAGS["debug"]`)
            path = f"{where}[{attr[0]!r}]"
            if isinstance(obj, list) and type(attr[0]) is int:  # `SIZES[0]`
                value = _index(obj, attr[0])
                place = ("index", obj, attr[0], path)
            elif isinstance(obj, dict):
                value = obj.get(attr[0], _MISSING)
                place = ("item", obj, attr[0], path)
            else:  # (a tuple's items are guarded with the tuple itself)
                break
        elif isinstance(obj, type):  # `Config.hidden`: a class attribute, maybe inherited
            path = f"{where}.{attr}"
            place, value = _class_attribute(obj, attr, path)
        else:
            value = _lookup(obj, attr)
            path = f"{where}.{attr}"
            place = ("attr", obj, attr, path)
            if value is _MISSING:  # kept elsewhere than the instance's __dict__
                place, value = _elsewhere(obj, attr, path)
        if value is _MISSING:  # (`getattr(o, "a", d)`: whether it is there is read too)
            if probe and not (made and i == 0) and not isinstance(obj, type):
                guards.append((("attr", obj, attr, path), "is", _MISSING))
            break
        if not (made and i == 0):
            _add(guards, place, value, items=tuple(attrs[i + 1:i + 2]) not in _APPENDING)
        if is_data(value) or is_eager_tensor(value) or isinstance(value, _PASS) and not (
                isinstance(value, type) and not _library_class(value)):
            break  # (a user class is followed: `Config.Head.scale`)
        obj, where = value, path


def _class_attribute(cls, attr, path):
    """`(place, value)` of `cls.attr` read through the class: guarded in the class that
    defines it, and by each class before it in the MRO not having one of its own. A
    descriptor (a method, a property) is not a value: `(None, MISSING)`."""
    try:
        owners = [k for k in cls.__mro__ if attr in vars(k)]
    except TypeError:  # (a metaclass with an unusual `__mro__`)
        return None, _MISSING
    value = vars(owners[0])[attr] if owners else None
    if not owners or isinstance(value, _NOT_STATE) and not isinstance(value, type):
        return None, _MISSING
    owner = owners[0]
    if _REC.guards is not None:
        for k in cls.__mro__:
            if k is owner:
                break
            _REC.guards.append((("class", k, attr, path), "is", _MISSING))
    return ("class", owner, attr, path), value


_GETTER_READS: dict = {}  # a property's getter -> its `pyct.reads.Reads` (None: no source)


def _elsewhere(obj, attr, path):
    """`(place, value)` of `obj.attr` when the object keeps it outside its `__dict__`: in
    `__slots__` (read through the slot's descriptor), or as an item of a dict subclass whose
    `__getattr__` serves items as attributes (an `AttrDict` config). For a property of a user
    class, what its getter reads is guarded instead (value `MISSING`)."""
    desc = inspect.getattr_static(type(obj), attr, None)
    if isinstance(desc, types.MemberDescriptorType):
        try:
            return ("slot", obj, attr, path), desc.__get__(obj, type(obj))
        except AttributeError:
            return ("slot", obj, attr, path), _MISSING
    if isinstance(desc, property):
        _record_property(obj, attr)
    elif isinstance(obj, dict) and desc is None and hasattr(type(obj), "__getattr__"):
        return ("item", obj, attr, path), dict.get(obj, attr, _MISSING)
    elif desc is not None and not isinstance(desc, _NOT_STATE) and not isinstance(obj, type):
        # a class attribute (`SCALE = 2.0` in the class body): guarded where it is defined,
        # and by the instance not having one of its own
        owner = next(k for k in type(obj).__mro__ if attr in vars(k))
        if _REC.guards is not None and isinstance(getattr(obj, "__dict__", None), dict):
            _REC.guards.append((("attr", obj, attr, path), "is", _MISSING))
        return ("class", owner, attr, path), desc
    return None, _MISSING


_NOT_STATE = (types.FunctionType, staticmethod, classmethod, property, types.MemberDescriptorType,
              types.GetSetDescriptorType, types.WrapperDescriptorType, types.MethodDescriptorType,
              types.BuiltinFunctionType, type)


def _record_property(obj, attr) -> None:
    """`obj.attr` is a property defined in user code: its getter ran unconverted while
    tracing, so what it reads (`self.mode`, a global) is guarded as if the getter had been
    called from converted code, with `obj` as its `self`."""
    prop = inspect.getattr_static(type(obj), attr, None)
    fget = prop.fget if isinstance(prop, property) else None
    if not isinstance(fget, types.FunctionType) or ignored_module(
            getattr(fget, "__module__", "") or ""):
        return
    if fget not in _GETTER_READS:
        try:
            _GETTER_READS[fget] = outside_reads(parser.parse_function(fget).node)
        except Exception:  # noqa: BLE001  (no source: nothing more can be guarded)
            _GETTER_READS[fget] = None
    record(fget, _GETTER_READS[fget], obj)


_ENVIRON_READS = ("environ", "environb", "getenv", "getenvb")


def _record_environment() -> None:
    """The trace read the process environment: guard all of it (one dict comparison), so a
    variable set or changed between calls traces again, as eager code would read it anew."""
    guards = _first_time(("os.environ",))
    if guards is not None:
        data = os.environ._data  # (the live dict behind `os.environ`)
        guards.append((("whole", data, None, "os.environ"), "eq", (dict, dict(data))))


def _library_class(cls) -> bool:
    return ignored_module(getattr(cls, "__module__", None))


def _first_time(key):
    """The guards being recorded, the first time `key` is seen in this trace; else None."""
    guards = _REC.guards
    if guards is None or key in _REC.seen:
        return None
    _REC.seen.add(key)
    return guards


def record_library_layer(layer, path: str) -> None:
    """A Layer of the library (`Dropout`, `BatchNorm1D`), called from converted code, runs
    its own `forward` unconverted: guard what decides what it computes, its `training` flag
    and its public Python settings (`p`, `momentum`) where its `forward` can read them, and
    which tensors it holds, so `model.bn.eval()`, `model.drop.p = 0.1` or
    `model.fc.weight = shared` between calls traces a new program."""
    guards = _first_time(("layer", id(layer)))
    if guards is None:
        return
    reads = _forward_reads(type(layer))
    for name, value in vars(layer).items():
        if (name == "training" or not name.startswith("_")) and is_data(value) and (
                reads is None or name in reads) or is_eager_tensor(value):  # (`fc.weight =`)
            _add(guards, ("attr", layer, name, f"{path}.{name}"), value)


def _forward_reads(cls):
    """The attributes the `forward` of a library Layer class can read (`pyct/self_reads.py`:
    its own and the methods it reaches; `Linear.in_features`, read by `extra_repr` alone, is
    not among them), or None (anything)."""
    from runtime.nn import Layer
    return attribute_reads(tuple(c for c in cls.__mro__ if c is not Layer and c is not object))


def record_hooks(layer, path: str) -> None:
    """The forward hooks a trace ran for `layer` (also none): registering or removing one
    between calls needs another program."""
    guards = _first_time(("hooks", id(layer)))
    if guards is None:
        return
    for kind in ("_forward_pre_hooks", "_forward_post_hooks"):
        hooks = getattr(layer, kind, None)
        if isinstance(hooks, dict):
            guards.append((("values", hooks, kind, f"{path}.{kind}"), "items",
                           tuple(hooks.values())))


def _index(lst, i):
    return lst[i] if -len(lst) <= i < len(lst) else _MISSING


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


_APPENDING = tuple((name,) for name in APPENDS)  # `self.log.append(v)` reads no item


def _add(guards: list, place: tuple, value, items: bool = True) -> None:
    if is_data(value):
        guards.append((place, "eq", (value.__class__, value)))
    elif not isinstance(value, types.ModuleType):  # (a module is not rebound in practice)
        # by identity: also functions and classes (`ACT = rt.tanh` swapped for another
        # activation, `self.act = F.relu`), which the trace called or built with
        guards.append((place, "is", value))
        path = place[3] if len(place) > 3 else place[2]
        if isinstance(value, dict) and hasattr(type(value), "__missing__"):  # (a defaultdict
            guards.append((("whole", value, None, path), "items", tuple(value)))  # adds keys)
        if items and type(value) in LISTS and len(value) <= 64:  # `for k in SIZES:` ran on
            # its items (not where the function only appends to it: `self.log.append(v)`)
            guards.append((("list", value, None, path), "items", tuple(value)))


def _current(place):
    kind = place[0]
    if kind == "cell":
        try:
            return place[1].cell_contents
        except ValueError:
            return _MISSING
    if kind in ("global", "item"):
        return place[1].get(place[2], _MISSING) if isinstance(place[1], dict) else _MISSING
    if kind in ("list", "whole"):
        return place[1]
    if kind == "slot":
        return getattr(place[1], place[2], _MISSING)
    if kind == "values":
        return list(place[1].values())
    if kind == "index":
        return _index(place[1], place[2])
    if kind == "class":
        return place[1].__dict__.get(place[2], _MISSING)
    if kind == "member":
        return place[2] in place[1]
    return _lookup(place[1], place[2])


class Like(tuple):
    """A list item guarded by its tensor's (shape, dtype, stop_gradient): a `Window`'s."""


def _same_items(lst, items) -> bool:
    """The list holds these items: the same objects, equal data, or tensors `Like` them."""
    return len(lst) == len(items) and all(
        a is b or is_data(b) and a.__class__ is b.__class__ and a == b or
        b.__class__ is Like and tensor_like(a, b) for a, b in zip(lst, items))


def compile_check(guards):
    """One function `check() -> bool` that is True when every guard holds: a single
    expression with the dicts and expected values bound as constants, so a call with 50
    guards checks them without a Python call per guard."""
    if not guards:
        return None
    env = {"_M": _MISSING, "_same": _same_items, "_index": _index, "_data": _same_data,
           "_like": tensor_like, "__name__": __name__}
    terms = []
    for i, (place, how, expected) in enumerate(guards):
        kind = place[0]
        if kind == "cell":
            env[f"c{i}"] = place[1]
            read = f"c{i}.cell_contents"
        elif kind in ("list", "whole"):
            env[f"c{i}"] = place[1]
            read = f"c{i}"
        elif kind == "index":  # an item of a list at a constant index
            env[f"c{i}"] = place[1]
            read = f"_index(c{i}, {place[2]!r})"
        elif kind == "values":  # a dict's values (a layer's hooks)
            env[f"c{i}"] = place[1]
            read = f"list(c{i}.values())" if expected else f"c{i}"
        elif kind == "slot":  # a member descriptor: no user code runs
            env[f"c{i}"] = place[1]
            read = f"getattr(c{i}, {place[2]!r}, _M)"
        elif kind == "class":  # the class's own namespace (a live mapping)
            env[f"d{i}"] = place[1].__dict__
            read = f"d{i}.get({place[2]!r}, _M)"
        elif kind == "member":  # `key in container` (a dict or set)
            env[f"c{i}"], env[f"k{i}"] = place[1], place[2]
            read = f"(k{i} in c{i})"
        else:
            if kind in ("global", "item"):
                store, name = place[1], place[2]
            else:
                d = getattr(place[1], "__dict__", None)
                name = place[2]
                store = d if isinstance(d, dict) and (name in d or expected is _MISSING) else (
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
        elif how == "data":
            env[f"x{i}"] = expected
            terms.append(f"_data({read}, x{i})")
        elif how == "like":
            env[f"x{i}"] = expected
            terms.append(f"_like({read}, x{i})")
        elif how == "items" and not expected:
            terms.append(f"not {read}")
        elif how == "items":
            env[f"x{i}"] = expected
            terms.append(f"_same({read}, x{i})")
        else:
            env[f"x{i}"] = expected
            terms.append(f"{read} is x{i}")
    source = "lambda: " + " and ".join(terms)
    return eval(compile(source, "<d2s guards>", "eval"), env)


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
        elif how == "data":
            if not _same_data(value, expected):
                return guard
        elif how == "like":
            if not tensor_like(value, expected):
                return guard
        elif value is not expected:
            return guard
    return None


def describe(guard) -> str:
    """The guarded place, as the user wrote it (`self.mode`, global `DEBUG`)."""
    place = guard[0]
    if place[0] in ("attr", "item", "list", "slot", "class", "values", "index", "whole",
                    "member"):
        return place[3]
    if place[0] == "global":
        return f"global {place[2]}"
    return f"closure variable {place[2]}"
