"""The state a converted call leaves when its program raises: what eager code leaves.

A `raise` (or an `assert`) under a tensor condition becomes an op that raises when the
program runs. Eager code has made its changes before that line by then: `self.calls += 1`, a
flag set, a record appended to a log, a tensor kept on an object. The write-back after a run
(`writeback.apply`, `Effects.replay`) runs only after a run that returns, so without more a
run that raises would leave the caller's objects as they were before the call.

So where the trace emits a run-time raise, `note` diffs the call's mutation logs against
their snapshots (taken when the call started): each place changed so far, with the value it
holds at that point. A Python value is kept as it is (containers copied); a graph value (a
tensor, a Python number computed from one) becomes an input of the raise op, whose exception
carries the values' arrays when it raises (`exc.state_at_raise`: `runtime/program/
debug_ops.py`). `apply` then stores them in their places, as the write-back after a run
that returns would: Python numbers as numbers of their type, tensors as new Tensors, a
Parameter (`keeps_identity`) written in place. What the
program writes in place itself (`p.set_value(...)`, a buffer's `+=`, an optimizer step) ran
before the raise op and stands.

Not written back, as documented in docs/d2s.md ("A run that raises"): a list that became a
tensor array at that point, a list or dict argument the trace got as a copy, and a place set
to an object the call made that holds tensors (each keeps what it held before the call).
"""
from __future__ import annotations

from runtime.core import active_builder, is_eager_tensor
from runtime.parameter import Parameter
from runtime.program import debug_ops
from runtime.tensor import wrap

from .mutation import MISSING, freeze
from .trace_state import current
from .variables import is_variable

_PLACES = ("attr", "cell", "global", "dict", "list")


class _Held:
    """Where a graph value sits in a noted place's value: the `index`-th input of the op."""

    __slots__ = ("index", "number", "stop_gradient")

    def __init__(self, index: int, v):
        self.index = index
        self.number = bool(getattr(v, "python_scalar", False))  # `loss.item()`, a counter
        self.stop_gradient = bool(v.stop_gradient)


class _Appended(list):
    """The items the call had appended to a list where it raises (the list the next call
    starts from is the one the caller has, not the one the trace started from)."""


_UNKNOWN = object()  # a value the program cannot give at the raise (a tensor array)


class StateAtRaise:
    """The places one raise op's call had changed, each with its value there (`_Held`
    markers for the op's inputs) and the Tensor it held before the call where that one is
    written in place (a Parameter; see `keep`), else None."""

    __slots__ = ("places",)

    def __init__(self, places: list):
        self.places = places

    def keep(self, kept: dict) -> None:
        """The places that keep their Tensor, written in place after a run that returns
        (`kept`: ident -> that Tensor, from `writeback.capture`): so does a raise."""
        self.places = [(slot, template, kept.get(slot.ident(), before))
                       for slot, template, before in self.places]

    def apply(self, arrays: list) -> None:
        for slot, template, before in self.places:
            if type(template) is _Appended:  # (to the list the call started from)
                slot.obj.extend(_filled(list(template), arrays))
                continue
            value = _filled(template, arrays)
            if slot.kind == "list":
                slot.obj[:] = value
            elif before is not None and isinstance(template, _Held) and not template.number:
                before._data = value._data.astype(before._data.dtype, copy=False)
                before._version += 1  # (in place, as after a run that returns)
                slot.set(before)
            else:
                slot.set(value)


def is_bookkeeping(slot) -> bool:
    """d2s's own attributes on user objects (a per-instance StaticFunction, a Layer's
    converted forward; a StaticFunction is known by its class's `__d2s_static_function__`)."""
    if slot.kind != "attr":
        return False
    return (isinstance(slot.key, str) and slot.key.startswith("__d2s")
            or getattr(type(slot.get()), "__d2s_static_function__", False) is True)


def keeps_identity(before) -> bool:
    """Whether the Tensor `before`, held at a place when the call started, keeps its identity
    when the call sets the place to a new tensor: a Parameter does (it is written in place;
    optimizers hold it)."""
    return isinstance(before, Parameter)


def note():
    """At a run-time raise being traced: `(key, graph values)` for the raise op (its
    exception will carry the key and the values' arrays), or None where the call changed
    nothing reachable so far."""
    state, builder = current(), active_builder()
    if not state.call_logs or builder is None:
        return None
    visible = {id(b) for b in builder.block.ancestors()}
    held: list = []
    places, seen = [], set()
    for log in state.call_logs:
        for slot in log.changed_now():
            if slot.ident() in seen or slot.kind not in _PLACES or is_bookkeeping(slot):
                continue
            seen.add(slot.ident())
            mark, before, value = len(held), value_before(log, slot), slot.get()
            appended = slot.kind == "list" and len(value) > len(before) and all(
                a is b for a, b in zip(before, value))
            template = _template(value[len(before):] if appended else value, held, visible)
            if template is _UNKNOWN:
                del held[mark:]
                continue
            kept = before if keeps_identity(before) else None
            places.append((slot, _Appended(template) if appended else template, kept))
    if not places:
        return None
    key = len(state.raises)  # (per trace, so printed programs do not depend on others; the
    # entry that runs the program takes its exception's state first: `Entry.raised`)
    state.raises[key] = StateAtRaise(places)
    return key, held


def value_before(log, slot):
    """A slot's value in the log's snapshot (MISSING where the walk did not find it)."""
    key = ("globals", id(slot.obj)) if slot.kind == "global" else id(slot.obj)
    entry = log.seen.get(key)  # (a module's globals are kept under this key)
    if entry is None:
        return MISSING
    snap, kind = entry[3], slot.kind
    if kind == "list":
        return list(snap)
    if kind == "cell":
        return snap
    return snap.get(slot.key, MISSING) if isinstance(snap, dict) else MISSING


def _template(value, held: list, visible: set, depth: int = 0):
    """`value` with each graph value replaced by a `_Held` (appended to `held`), containers
    copied; `_UNKNOWN` where the program cannot give a part of it at the raise."""
    if is_variable(value):
        if value.is_array or id(getattr(value, "block", None)) not in visible:
            return _UNKNOWN  # (a tensor array; a value of a block that is not open here)
        held.append(value)
        return _Held(len(held) - 1, value)
    if depth > 6 or type(value) not in (list, tuple, dict):
        return _UNKNOWN if _holds_graph_values(value) else freeze(value)
    items = value.values() if type(value) is dict else value
    done = [_template(x, held, visible, depth + 1) for x in items]
    if any(x is _UNKNOWN for x in done):
        return _UNKNOWN
    if type(value) is dict:
        return dict(zip(value.keys(), done))
    return type(value)(done)


def _holds_graph_values(value, depth: int = 0) -> bool:
    """A structure other than a plain list, tuple or dict holding graph values (a list of
    tuples as tensor arrays, `lists.StructArray`; d2s's empty-array marker; an object the
    call made, `Box(x * 2)`, whose attributes the program gives only after a run that
    returns)."""
    if is_variable(value):
        return True
    if depth > 6:
        return False
    if isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
    elif type(value).__module__ not in ("builtins", "numpy") and isinstance(
            getattr(value, "__dict__", None), dict) and not (
            isinstance(value, type) or is_eager_tensor(value)):
        items = list(vars(value).values())
    else:
        return False
    return any(_holds_graph_values(x, depth + 1) for x in items)


def _filled(template, arrays: list):
    """The value of a noted place at the raise: `_Held` markers replaced by Python numbers or
    Tensors made from the arrays the exception carried."""
    if isinstance(template, _Held):
        a = arrays[template.index]
        if template.number:
            return a.item()
        t = wrap(a)
        t.stop_gradient = template.stop_gradient
        return t
    if type(template) in (list, tuple):
        return type(template)(_filled(x, arrays) for x in template)
    if type(template) is dict:
        return {k: _filled(x, arrays) for k, x in template.items()}
    return template


debug_ops.STATE_AT_RAISE[0] = note  # (each raise and assert op built asks)


def apply(exc: BaseException, table: dict) -> None:
    """After a run raised `exc`: the state the call had changed where it raised, stored in
    its places (`table`: key -> `StateAtRaise`, the program's). Nothing when `exc` was not
    raised by one of the program's raise ops."""
    held = getattr(exc, "state_at_raise", None)
    if held is None or not table:
        return
    noted = table.get(held[0])
    if noted is not None:
        del exc.state_at_raise
        noted.apply(held[1])

