"""What a call of a StaticFunction is, as far as its program is concerned: the cache key, and
the tensors the program is fed.

The key rules (also in `docs/d2s.md`, "Which calls share a program"):

- a Tensor, a NumPy array (fed as a tensor input, as Paddle does) or an InputSpec: its shape
  (the InputSpec's, with -1 for dynamic dims, when one is given), dtype and stop_gradient;
- a hashable Python value whose type compares by value (numbers, strings, tuples of those,
  enums, frozen dataclasses...): its type and value;
- any other object (compared by identity, also one that is unhashable because its class
  defines `__eq__` alone): the object itself, held by a weak reference, so an object that
  dies never matches a new one that happens to reuse its address; what the trace read of its
  fields is guarded (`guards.py`);
- a set: its frozen contents; lists, tuples and dicts: their nesting, and their leaves by the
  rules above (a list only appended to, a list or dict holding no tensors that a program
  writes in: the object, `_appended_lists`); keyword arguments that name positional
  parameters count as positional;
- the bound instance, its `training` flag, and the auto_cast state of the call.

`repr()` is never part of a key: NumPy shortens it, and a class's repr may hide fields.
"""
from __future__ import annotations

import dataclasses
import inspect
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import backend, core, pytree
from runtime.tensor import wrap

# Classes of runtime tensors (Tensor, Parameter, ...) met so far: `isinstance` is too slow for
# the hot path, so the fast key checks the exact class and learns new ones on the slow path.
TENSOR_CLASSES: set = set()
_PY_SCALARS = frozenset((int, float, bool, str, complex, type(None)))
_NDARRAY = np.ndarray
_array_of = core.array_of  # a Tensor's array

_MODE = core.mode_state()  # the mode switches: each attribute read is the calling thread's


def is_tensor(x) -> bool:
    """An eager runtime Tensor (or Parameter)."""
    return isinstance(x, core.TensorBase)


def is_spec(x) -> bool:
    return type(x).__name__ == "InputSpec"


def amp_key():
    """The auto_cast state of this thread, as a key (None outside auto_cast)."""
    amp = _MODE.amp
    return None if amp is None else amp.key


def default_dtype_key() -> str:
    """This thread's default float dtype (`rt.set_default_dtype`): creation ops in a trace
    read it, so a program is traced for each."""
    return _MODE.default_float


class FunctionSpec:
    """The signature and InputSpecs of one StaticFunction: the only code that turns a call's
    arguments into a cache key and feed tensors."""

    def __init__(self, function, input_spec, has_instance: bool, reads=None):
        self.signature = inspect.signature(function)
        self.input_spec = list(input_spec) if input_spec is not None else None
        self.has_instance = has_instance
        self._reads = reads  # () -> what the function reads (`pyct/reads.py`), or None
        self._appended = None  # indices of list parameters the function only appends to
        self._bound: frozenset = frozenset()  # of lists / dicts effects write in (`bind`)
        self._pinned: frozenset = frozenset()  # of those also keyed by their values (`bind`)
        names = list(self.signature.parameters)
        self.arg_names = names[1:] if has_instance and names else names
        # Defaults of the trailing positional parameters: a call that leaves them out is the
        # call that passes them (`f(x)` and `f(x, 1.0)` share a program when 1.0 is the default)
        params = list(self.signature.parameters.values())[1 if has_instance else 0:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        self.n_positional = len(positional)
        self.defaults = []
        for p in positional:
            if p.default is p.empty:
                self.defaults = []
            else:
                self.defaults.append(p.default)

    def normalize(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Keyword arguments that name positional parameters moved into `args`, so `f(x, n=2)`
        and `f(x, 2)` are one call (and share one program)."""
        if not kwargs:
            return args, kwargs
        params = list(self.signature.parameters.values())
        if self.has_instance and params:
            params = params[1:]
        args = list(args)
        kwargs = dict(kwargs)
        for p in params[len(args):]:
            if p.kind is not p.POSITIONAL_OR_KEYWORD:
                break
            if p.name in kwargs:
                args.append(kwargs.pop(p.name))
            elif p.default is not p.empty and any(
                    q.name in kwargs for q in params[len(args) + 1:]):
                args.append(p.default)  # a default skipped over by a later keyword
            else:
                break
        return tuple(args), kwargs

    def complete(self, args: tuple) -> tuple:
        """`args` with the defaults of the positional parameters it leaves out."""
        missing = self.n_positional - len(args)
        if missing <= 0 or missing > len(self.defaults):
            return args
        return args + tuple(self.defaults[len(self.defaults) - missing:])

    def key(self, args: tuple, kwargs: dict, instance, training: bool):
        """(hashable key, the call's tensors in feed order). One Tensor passed as several
        arguments (`attn(x, x, x)`) is fed once, and the key says which arguments are the
        same object: eager code sees one object there (`q is k`, a write through one seen
        through the other), so the program is traced for that."""
        found = None
        if not kwargs and self.input_spec is None:
            found = self._flat_key(args, instance, training)
        if found is None:
            found = self._full_key(args, kwargs, instance, training)
        tensors = found[1]
        if len(tensors) > 1 and len({id(t) for t in tensors}) != len(tensors):
            first: dict = {}
            pattern = tuple(first.setdefault(id(t), i) for i, t in enumerate(tensors))
            unique = [t for i, t in enumerate(tensors) if pattern[i] == i]
            return found[0] + (("same objects", pattern),), unique
        return found

    def _flat_key(self, args, instance, training):
        """The key of a call whose arguments are tensors, arrays and Python scalars only (the
        common case, kept cheap), or None. Equal to what `_full_key` gives for such calls."""
        parts = []
        tensors = []
        for a in args:
            cls = a.__class__
            if cls in TENSOR_CLASSES:
                d = _array_of(a)
                parts.append((d.shape, d.dtype, a.stop_gradient))
                tensors.append(a)
            elif cls in _PY_SCALARS:
                parts.append((cls, a))
            elif cls is _NDARRAY:
                parts.append((a.shape, a.dtype, True))
                tensors.append(_array_tensor(a, None))
            else:
                return None
        amp = _MODE.amp
        parts.append((id(instance), training, len(args), (), None if amp is None else amp.key,
                      _MODE.default_float))
        return tuple(parts), tensors

    def _full_key(self, args, kwargs, instance, training):
        written = self._written(args, kwargs)
        args = self._appended_lists(args)
        leaves: list = []
        _leaves(args, leaves)
        if kwargs:
            _leaves([kwargs[k] for k in sorted(kwargs)], leaves)
        specs = self.input_spec
        key = []
        tensors = []
        t_index = 0
        for x in leaves:
            if is_tensor(x) or isinstance(x, np.ndarray):
                spec = specs[t_index] if specs is not None and t_index < len(specs) else None
                spec = spec if is_spec(spec) else None
                if isinstance(x, np.ndarray):
                    x = _array_tensor(x, spec)
                else:
                    TENSOR_CLASSES.add(x.__class__)
                    self._check_dtype(x, spec, t_index)
                shape = self._checked_shape(x, spec, t_index)
                key.append((shape, _array_of(x).dtype, x.stop_gradient))
                tensors.append(x)
                t_index += 1
            elif is_spec(x):
                key.append((x.shape, x.dtype.name, x.stop_gradient))
                t_index += 1
            else:
                key.append(value_key(x))
        key.append((id(instance), training, len(leaves), tuple(sorted(kwargs)), amp_key(),
                    default_dtype_key()))
        if kwargs or any(pytree.is_container(a) for a in args):
            key.append(pytree.structure(pytree.flatten((args, kwargs))[1]))
        if written:
            key.append(written)
        return tuple(key), tensors

    def _written(self, args: tuple, kwargs: dict) -> tuple:
        """The list / tuple / dict / dataclass arguments a program writes in (`bind`) that are keyed by
        their values (tensors in them, or other reads), by identity too: the program's
        writes go to the objects the trace was passed."""
        both = self._pinned | self._bound
        if not both:
            return ()
        found = [_Identity(a) for i, a in enumerate(args) if i in both and
                 pytree.is_container(a) and (i in self._pinned or any(
                     is_tensor(x) or x.__class__ is _NDARRAY for x in pytree.flatten(a)[0]))]
        return tuple(found + [_Identity(kwargs[k]) for k in sorted(kwargs) if k in both and
                              pytree.is_container(kwargs[k])])

    def _appended_lists(self, args: tuple) -> tuple:
        """A list of Python values passed where the function only appends to it (`log.append(v)`,
        `pyct/reads.py`) is keyed by identity: the program reads none of its items, which
        grow on every call (the trace's appends are replayed, `side_effects.py`). So is a
        list, dict or dataclass of Python values a program writes in (`bind`) and reads
        only through constant keys or fields (`state.step += 1`): its effects go to the
        object passed (a counter in it is program state: one program for every count)."""
        if not any(a.__class__ is list or a.__class__ is dict or _is_dataclass(a)
                   for a in args):
            return args
        if self._appended is None:
            reads = self._reads() if self._reads is not None else None
            names = reads.appended & reads.params if reads is not None else frozenset()
            self._appended = frozenset(i for i, n in enumerate(self.arg_names) if n in names)
        by_identity = self._appended | self._bound
        return tuple(_Identity(a) if self.only_appended(i, a) or i in by_identity and (
            a.__class__ in (list, dict) or _is_dataclass(a)) and not any(
                is_tensor(x) or x.__class__ is _NDARRAY for x in pytree.flatten(a)[0]) else a
            for i, a in enumerate(args))

    def only_appended(self, i: int, a) -> bool:
        """Whether the argument `a` at `i` is a list the function only appends to: keyed by
        identity also where it holds tensors (`hist.append(x.mean())`), which are not fed
        (the program reads none of them; its appends are written back after each call)."""
        return a.__class__ is list and self._appended is not None and i in self._appended

    def bind(self, indices: frozenset) -> bool:
        """Key the list / dict arguments at `indices` by identity from now on (a program
        writes in them: `side_effects.bound_arguments`; the program's writes go to the
        objects the trace was passed): by identity alone those the function reads only
        through constant keys, which are guarded, or appends to (`pyct/reads.py`); the
        others by their values too (another read, `len(log)`, or tensors in them, depend on
        what they hold). True when that is new."""
        reads = self._reads() if self._reads is not None else None
        names = reads.keyed & reads.params if reads is not None else frozenset()
        alone = frozenset(i for i in indices if type(i) is int and i < len(self.arg_names)
                          and self.arg_names[i] in names)
        pinned = indices - alone
        if alone <= self._bound and pinned <= self._pinned:
            return False
        self._bound |= alone
        self._pinned |= pinned
        return True

    def spec_for(self, index: int):
        """The InputSpec given for the `index`-th tensor argument, or None."""
        specs = self.input_spec
        if specs is None or index >= len(specs) or not is_spec(specs[index]):
            return None
        return specs[index]

    def _checked_shape(self, x, spec, index: int) -> tuple:
        shape = _array_of(x).shape
        if spec is None:
            return shape
        if len(spec.shape) != len(shape) or any(s not in (-1, d)
                                                for s, d in zip(spec.shape, shape)):
            raise ValueError(f"tensor argument {index}: a tensor of shape {list(shape)} does "
                             f"not match its InputSpec shape {list(spec.shape)}")
        return spec.shape

    def _check_dtype(self, x, spec, index: int) -> None:
        if spec is not None and x.dtype != spec.dtype:
            raise TypeError(
                f"tensor argument {index}: a {x.dtype.name} tensor does not match its "
                f"InputSpec dtype {spec.dtype.name}; cast it first (x.astype("
                f"'{spec.dtype.name}')) or declare InputSpec(..., dtype='{x.dtype.name}')")


@dataclasses.dataclass(frozen=True)
class TraceTarget:
    """Everything a trace needs to know about the function it traces, as values: made by
    `StaticFunction.trace_target()` (once per training mode; the function is converted then)
    and passed down the spine (`program_cache` -> `tracing` -> `running`, see
    docs/architecture.md), which never reaches back for the StaticFunction itself."""

    spec: FunctionSpec
    function: Callable  # the plain Python function that is converted
    instance: Any  # the object a converted method is bound to (a Layer), or None
    qualname: str  # how errors and logs name the function
    converted: Callable  # what the trace calls: the converted function, instance bound
    reads: Any  # what `function` reads from outside its arguments (`pyct/reads.py`)
    training: bool  # the training flag the call's key holds
    effect_places: dict  # places earlier traces changed (`side_effects.scan`, updated there)
    number: int  # which program of the function this trace makes (for the log)

    @property
    def eager(self) -> Callable:
        """The original function, bound to the instance for a method."""
        if self.instance is not None:
            return self.function.__get__(self.instance)
        return self.function


def _is_dataclass(a) -> bool:
    return dataclasses.is_dataclass(a) and not isinstance(a, type)


def _array_tensor(a: np.ndarray, spec):
    """A NumPy array argument as the Tensor the program is fed (cast to its InputSpec's dtype
    where one is given, as feeding a static program does)."""
    if spec is not None and a.dtype != spec.dtype.np:
        a = a.astype(spec.dtype.np)
    return wrap(backend.XP.asarray(a))


def value_key(x):
    """The key part of a non-tensor leaf (see the module doc)."""
    cls = type(x)
    if cls in _PY_SCALARS:
        return (cls, x)
    if isinstance(x, (set, frozenset)):
        try:
            return (cls, frozenset(x))
        except TypeError:
            pass
    by_identity = cls.__eq__ is object.__eq__
    if not by_identity:
        try:
            hash(x)
            return (cls, x)
        except TypeError:
            pass
    try:
        return (cls, weakref.ref(x) if by_identity else _WeakIdentity(x))
    except TypeError:
        pass
    return (cls, _Identity(x))


class _WeakIdentity:
    """Identity key for an unhashable object (`__eq__` without `__hash__`, a plain
    dataclass), held by a weak reference: a `weakref.ref` would hash the object itself. What
    the trace read of its fields is guarded (`guards.record`)."""

    __slots__ = ("id", "ref")

    def __init__(self, obj):
        self.ref = weakref.ref(obj)
        self.id = id(obj)

    def __eq__(self, other):
        return isinstance(other, _WeakIdentity) and other.id == self.id and \
            self.ref() is not None and other.ref() is self.ref()

    def __hash__(self):
        return self.id


class _Identity:
    """Identity key for an object that cannot be weak-referenced: holds it (so its address
    is not reused while the key lives)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def _leaves(x, out: list) -> None:
    out.extend(pytree.flatten(x)[0])
