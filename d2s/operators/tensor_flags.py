"""Flags that converted code sets on a Tensor the program reads by reference (a Layer's
Parameter, a buffer, a tensor held by the instance or a closure).

`self.fc.weight.stop_gradient = self.freeze` in `forward` (also `trainable`, `need_clip`,
`optimize_attr`, `regularizer`, `do_model_average`, `persistable`) changes a Python attribute
of an eager Tensor: while tracing it runs once, and a later call that reuses the program
would leave the flag where an earlier call put it, where eager code sets it on every call.
The assignment becomes `_d2s.set_flag(value, tensor, name)` (`converters.builtin_calls`,
after the control-flow passes), which sets it and, while a program is traced, notes the
tensor's flag and the value it had before the trace changed it (`TraceState.flags`). The
trace (`tracing.py`) then replays the value the trace left after each call and guards the
program by the value the call starts from (a call starting from another value traces
another program), so every call leaves the flag as eager code does. Set under a condition a
tensor decides or in a loop whose condition is a tensor, the flag would depend on the run:
refused at the line. On a value the program computes (a Variable), the assignment is as it
always was. Code d2s leaves unconverted (a library's `freeze(model.backbone)`, a
`not_to_static` helper) sets flags with no such call: the trace compares the flags of the
Parameters of the Layers it is given (the instance, the arguments) before and after
(`snapshot`, `note_unconverted`) and notes those changed as if converted code had set them.

    p.stop_gradient = flag   ->   _d2s.set_flag(flag, p, 'stop_gradient')
"""
from __future__ import annotations

import sys

from runtime.core import active_builder, is_eager_tensor
from runtime.parameter import FLAGS_VERSION, Parameter
from runtime.program.origin import frame_line

from ..call_policy import TENSOR_FLAGS
from ..errors import ConversionError
from ..pyct import loader
from .mutation import MISSING as _MISSING
from .trace_state import current
from .variables import is_variable, user_origin, where


def set_flag(value, obj, name: str) -> None:
    """`obj.<name> = value` (a name of `call_policy.TENSOR_FLAGS`), noted while tracing (see the module)."""
    if is_eager_tensor(obj) and active_builder() is not None:
        state = current()
        if state.frames or is_variable(value):
            _refuse(name, value)
        state.flags.setdefault((id(obj), name), (obj, name, getattr(obj, name, _MISSING)))
    setattr(obj, name, value)


def _refuse(name: str, value) -> None:
    f = sys._getframe(2)  # (the converted code's assignment)
    src = loader.lookup(f.f_code.co_filename, frame_line(f))
    what = ("a value the program computes" if is_variable(value) else
            "a value under a condition or in a loop whose condition is a tensor")
    raise ConversionError(
        f"setting `.{name}` of a tensor the program reads ({where(src)}) to {what}: eager "
        f"code sets the flag when the line runs, which one program cannot decide per run "
        f"(the flag is a Python attribute, not a tensor). Set it from a Python value, outside "
        f"the tensor `if` or loop.", src)


# the flags a Tensor holds itself (`trainable` is `not stop_gradient`)
_HELD = tuple(sorted(TENSOR_FLAGS - {"trainable"}))


def snapshot(objects) -> list:
    """(Parameter, its flags) of every Parameter of the Layers among `objects` or held in
    their attributes (a trainer's `self.model`): what code d2s does not convert may change
    while tracing."""
    nn = sys.modules.get("runtime.nn")  # (not imported: no Layer exists; `import d2s`
    if nn is None:  # leaves runtime.nn unloaded until used)
        return []
    Layer = nn.Layer  # noqa: N806
    layers = [o for o in objects if isinstance(o, Layer)]
    for obj in objects:
        if not isinstance(obj, Layer) and isinstance(getattr(obj, "__dict__", None), dict):
            layers += [v for v in vars(obj).values() if isinstance(v, Layer)]
    seen: dict = {}
    for layer in layers:
        for p in layer.parameters():
            seen.setdefault(id(p), p)
    return [(p, [getattr(p, name, _MISSING) for name in _HELD]) for p in seen.values()]


def note_unconverted(state, snap: list) -> None:
    """Note the flags in `snap` that the trace changed other than through `set_flag`."""
    for p, name, old in _changed(snap):
        state.flags.setdefault((id(p), name), (p, name, old))


def _changed(snap: list):
    for p, values in snap:
        for name, old in zip(_HELD, values):
            new = getattr(p, name, _MISSING)
            if new is not old and new != old:
                yield p, name, old


def watched_now() -> list | None:
    """The watched flags' values now (on entering a graph branch or loop body), or None."""
    state = current()
    return [(p, [getattr(p, n, _MISSING) for n in _HELD]) for p, _ in state.watched] \
        if state.watched else None


def refuse_changed_in_block(before: list | None) -> None:
    """On leaving a graph branch or loop body: a flag that code d2s does not convert set in
    it would be set on the runs that take it only, which the program cannot do."""
    for p, name, _ in _changed(before or ()):
        src = user_origin()
        raise ConversionError(
            f"`.{name}` of the parameter {p.name} was set inside an `if` or loop whose "
            f"condition is a tensor ({where(src)}) by code d2s does not convert (a library "
            "function, a `not_to_static` helper): eager code sets it on the runs that take "
            "that path only, which one program cannot do (the flag is a Python attribute). "
            "Call it outside the tensor `if` or loop, deciding with a Python value.", src)


def written(state) -> list:
    """(tensor, name, the value before the trace, the value the trace left) per flag the
    trace set, in the order first set."""
    return [(obj, name, start, getattr(obj, name, _MISSING))
            for obj, name, start in state.flags.values()]


def restore(state) -> None:
    """Put back the values the flags had before the trace (a trace that failed or is done
    again: the next one starts from them)."""
    for obj, name, start in reversed(list(state.flags.values())):
        if start is not _MISSING:
            setattr(obj, name, start)


class FrozenParameters:
    """The Parameters a program reads that did not require a gradient when it was traced
    (`p.stop_gradient = True` before the call, a frozen backbone): the program computes no
    gradient for them, so a call where one requires a gradient again (unfrozen between calls,
    as fine-tuning does) needs another program. `all_frozen` is what a guard reads."""

    __slots__ = ("params", "version")

    def __init__(self, params: tuple):
        self.params, self.version = params, -1

    @property
    def all_frozen(self) -> bool:
        """O(1) while no Parameter's flag was set since they were last all seen frozen."""
        if self.version == FLAGS_VERSION[0]:
            return True
        version = FLAGS_VERSION[0]
        if not all(p.stop_gradient for p in self.params):
            return False
        self.version = version
        return True


def frozen_guard(program, written: set) -> tuple:
    """The guard that the Parameters `program` reads without a gradient still have none (those
    whose flags the traced code sets, `written` ids, are guarded by their own values), or ()."""
    frozen = tuple(t for t in program.tensors.values() if isinstance(t, Parameter) and
                   t.stop_gradient and id(t) not in written)
    if not frozen:
        return ()
    return ((("slot", FrozenParameters(frozen), "all_frozen",
              "the stop_gradient of the parameters frozen when traced"), "eq", (bool, True)),)
