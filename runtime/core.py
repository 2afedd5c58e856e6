"""The bottom of `runtime`: the tensor base classes and the eager hooks the op layer calls.

The op layer (`runtime/ops`) computes on arrays and must hand back eager `Tensor`s and record
tape nodes, yet `Tensor` (`runtime/tensor.py`) and the tape (`runtime/autograd.py`) are built
on top of the ops. This module breaks that knot in the open: it imports nothing from
`runtime`, everything else may import it, and

- `TensorBase` / `VariableBase` are the bases of the eager `Tensor` and the static
  `Variable`, so any layer can ask "is this a tensor?" with `isinstance` without importing the
  layer that defines the class;
- `mode_state()` holds the per-thread mode switches (eager or building a program, gradients
  on or off, auto_cast), with the accessors `active_builder()` and `amp_state()`;
- `wrap(array)` (make an eager Tensor), `record(op, inputs, attrs, outputs)` (a tape node),
  `to_tensor(data)` and `constant(data)` (an eager Tensor copy even while a program is being
  built) and `backward` (the tape's, for `Tensor.backward`) are filled in once, by
  `runtime.tensor` and `runtime.autograd`, when they are imported (`install`).
  `runtime.ops.registry.bind` binds the first two directly for speed.

>>> import runtime as rt
>>> from runtime import core
>>> core.is_tensor(rt.ones([2])), core.is_tensor([1.0]), isinstance(rt.ones([1]), core.TensorBase)
(True, False, True)
"""
from __future__ import annotations

import operator
import threading
from collections.abc import Callable


class TensorBase:
    """The base of the eager `runtime.Tensor` (and so of `Parameter`)."""

    __slots__ = ()


class VariableBase:
    """The base of the static `runtime.static.Variable` (a value of a program being built)."""

    __slots__ = ()


class ModeState(threading.local):
    """The mode switches read on every op, one set per thread (as PyTorch's grad mode): a
    program being built in one thread never records another thread's eager ops, and `no_grad`
    in one thread does not switch off recording in the others. A new thread starts in eager
    mode with gradients on and no auto_cast."""

    def __init__(self):
        self.grad_enabled = True
        # True while gradient rules build a backward that is itself differentiated
        # (`rt.grad(create_graph=True)`, eager or converted): a fused op's rule then builds
        # its backward from differentiable ops (`lstm_sequence`'s)
        self.create_graph = False
        self.builder = None  # the static program builder while one is active
        self.amp = None  # the active auto_cast state, or None
        self.default_float = "float32"  # rt.set_default_dtype: what creation ops make
        self.value_read = None  # `hook(tensor)` before an eager tensor's value is read as
        # Python (`int(t)`, `t.item()`, `t.numpy()`): set by `watch_value_reads`


_MODE = ModeState()


def mode_state() -> ModeState:
    """The mode switches (`grad_enabled`, `builder`, `amp`): one object whose attributes hold
    the calling thread's values, so a hot path may keep it and read them per call. Only
    `runtime` sets them (`program_guard`, `no_grad`, `auto_cast`); other packages read them
    through this or the accessors below."""
    return _MODE


def watch_value_reads(hook):
    """Call `hook(tensor)` in this thread each time an eager tensor's value is read as Python
    (`bool`, `int`, `float`, `operator.index`, `item`, `tolist`, `numpy`), or stop with
    None; returns the hook it replaces. d2s sets one while tracing: a value read then is
    baked into the program, so the program must depend on it."""
    previous, _MODE.value_read = _MODE.value_read, hook
    return previous


def setting_read(obj, name: str):
    """`obj.<name>`, a Python setting that decides what library code builds into the program
    being built (`GradScaler._enable`): noted on the program (`settings_read`), so d2s
    guards it, and the program applies only while it keeps that value."""
    value = getattr(obj, name)
    builder = _MODE.builder
    if builder is not None:
        builder.program.__dict__.setdefault("_settings_read", {})[id(obj), name] = (
            obj, name, value)
    return value


def settings_read(program) -> list:
    """`[(obj, name, value)]`: the settings read while building `program` (`setting_read`)."""
    return list(program.__dict__.get("_settings_read", {}).values())


def active_builder():
    """The builder of the program this thread is building (static mode), or None (eager)."""
    return _MODE.builder


def amp_state():
    """This thread's active `auto_cast` state (with its `.key`), or None outside auto_cast."""
    return _MODE.amp


_BOTH = (TensorBase, VariableBase)


def is_tensor(x) -> bool:
    """An eager Tensor or a static Variable."""
    return isinstance(x, _BOTH)


def is_eager_tensor(x) -> bool:
    return isinstance(x, TensorBase)


def is_variable(x) -> bool:
    return isinstance(x, VariableBase)


# The array (NumPy / CuPy) an eager Tensor holds, for other packages' hot paths (d2s's cache
# keys): a C-level getter, as cheap as reading the attribute.
array_of: Callable = operator.attrgetter("_data")


def _missing(name: str) -> Callable:
    def fn(*args, **kwargs):
        raise RuntimeError(f"runtime.core.{name} is used before runtime.tensor / "
                           "runtime.autograd installed it (import runtime first)")
    return fn


wrap: Callable = _missing("wrap")  # array -> Tensor
record: Callable = _missing("record")  # (op, inputs, attrs, outputs) -> None
to_tensor: Callable = _missing("to_tensor")  # data -> Tensor (an assign op while building)
constant: Callable = _missing("constant")  # data -> eager Tensor, also while building
backward: Callable = _missing("backward")  # (tensors, grad_tensors, retain_graph): Tensor.backward
_listeners: list = []


def install(*, wrap: Callable | None = None, record: Callable | None = None,
            to_tensor: Callable | None = None, constant: Callable | None = None,
            backward: Callable | None = None) -> None:
    """Called by `runtime.tensor` and `runtime.autograd` at import: the functions the layers
    below them call."""
    g = globals()
    for name, fn in (("wrap", wrap), ("record", record), ("to_tensor", to_tensor),
                     ("constant", constant), ("backward", backward)):
        if fn is not None:
            g[name] = fn
    for listener in _listeners:
        listener()


def on_install(listener: Callable) -> None:
    """Call `listener()` after every `install` (the registry rebinds its fast locals)."""
    _listeners.append(listener)
