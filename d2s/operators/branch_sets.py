"""A Python set that the code of a tensor `if` or graph loop changes (`mutation.Log` tracks
sets in graph blocks: every trace of a branch or body starts from the set as it was, and a
changed set is a slot of kind 'set' whose value is its items as a tuple).

The `cond` op gets None in a set's place (a set has no tensor form); `set_values` decides
what the set holds after the `if`: the branches' items where they are the same objects. A set
the branches leave holding other items is refused at the `if` when code after it can read
the set (through a name the converter found live there, `read_after`) or the caller can: no
read of it could be decided, and reads of a set are not all converted code (`s | t`, a
comprehension, `str(s)`, a library call). Else it holds the union, with its converted reads
refused (`traced_keys.check_decided`: a read through another name, an alias). `mutation_loop`
refuses a set a graph loop body changes.
"""
from __future__ import annotations

import re
import sys
import types

from runtime.core import is_tensor

from ..errors import ConversionError
from ..pyct import loader
from .branch_mismatch import advice, set_mismatch
from .trace_state import current
from .variables import Undefined, is_variable, where


def set_changed(obj: set, snap: tuple) -> bool:
    """Whether a set holds other items than `snap` (by identity: items may be graph values,
    whose `==` is an op)."""
    return len(obj) != len(snap) or {id(x) for x in obj} != {id(x) for x in snap}


def sets_aside(log, values: list) -> list:
    """The items of each changed set after this branch, kept aside for `finish`; the op gets
    None in their place (a set has no tensor form)."""
    for i, slot in enumerate(log.slots):
        if slot.kind == "set":  # (by the slot, not its index: a branch traced again may
            log.set_items.setdefault(slot.ident(), []).append(values[i])  # find more)
            values[i] = None
    return values


def set_values(log, values: list) -> list:
    """`values` with each changed set's items after the `if`: the branches' items where they
    are the same objects; otherwise the run decides which the set holds, which a set of
    Python values cannot express: refused here when code after the `if` or the caller can
    read the set, else its later converted reads are (`traced_keys.check_decided`), so a set
    nothing reads again (code after an early `return`) converts."""
    for i, slot in enumerate(log.slots):
        items = log.set_items.get(slot.ident()) if slot.kind == "set" else None
        if not items:
            continue
        a, b = items[-2:] if len(items) > 1 else (items[0], items[0])
        if len(a) == len(b) and all(x is y for x, y in zip(a, b)):
            values[i] = a
            continue
        root = re.split(r"[.\[]", slot.path, maxsplit=1)[0]
        if root in log.read_after:
            raise ConversionError(
                f"{log._shown(slot.path)} {set_mismatch(a, b)} of an if whose condition is a "
                f"tensor ({where(log.src)}), and code after the if can read it: which items "
                f"it holds is decided when the program runs. {advice(slot)}", log.src)
        if any(id(slot.obj) in call.seen for call in current().call_logs):
            raise ConversionError(
                f"{log._shown(slot.path)} {set_mismatch(a, b)} of an if whose condition is a "
                f"tensor ({where(log.src)}), and the caller sees it after the call. "
                f"{advice(slot)}", log.src)
        alias = _alias(slot.obj, root)
        if alias is not None:
            raise ConversionError(
                f"{log._shown(slot.path)} {set_mismatch(a, b)} of an if whose condition is a "
                f"tensor ({where(log.src)}), and code after the if can read it as {alias}: "
                f"which items it holds is decided when the program runs. {advice(slot)}",
                log.src)
        current().undecided[id(slot.obj)] = (slot.obj, log._shown(slot.path), log.src)
        values[i] = a + tuple(x for x in b if all(x is not y for y in a))
    return values


# (not searched: functions, and the placeholder of an unbound name, which raises on any read)
_OPAQUE = (types.FunctionType, types.MethodType, types.ModuleType, type, Undefined)


def _alias(obj: set, root: str) -> str | None:
    """A local name of the generated code running the `if`, other than `root` (the name the
    branches reached `obj` by), whose value holds `obj` (itself, or in its items, values or
    attributes): an alias that code after the `if` may read; None if there is none.
    (Functions are not searched: the branch functions close over `root`.)"""
    frame = sys._getframe(1)
    while frame is not None and loader.line_map(frame.f_code.co_filename) is None:
        frame = frame.f_back
    if frame is None:
        return None
    for name, value in frame.f_locals.items():
        if name != root and _holds(value, obj):
            return name
    return None


def _holds(value, obj, limit: int = 2000) -> bool:
    stack, seen = [value], set()
    while stack and len(seen) < limit:
        v = stack.pop()
        if v is obj:
            return True
        if id(v) in seen or isinstance(v, _OPAQUE) or is_variable(v) or is_tensor(v):
            continue
        seen.add(id(v))
        if isinstance(v, (list, tuple, set, frozenset)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        else:
            try:
                stack.extend(vars(v).values())
            except TypeError:  # no `__dict__`
                pass
    return False
