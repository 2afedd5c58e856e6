"""A Python set that the code of a tensor `if` or graph loop changes (`mutation.Log` tracks
sets in graph blocks: every trace of a branch or body starts from the set as it was, and a
changed set is a slot of kind 'set' whose value is its items as a tuple).

The `cond` op gets None in a set's place (a set has no tensor form); `set_values` decides
what the set holds after the `if`: the branches' items where they are the same objects, else
the union, with its reads refused (`traced_keys.check_decided`). A set the caller can reach
is refused at the `if` (`mutation_loop` refuses a set a graph loop body changes).
"""
from __future__ import annotations

import re

from ..errors import ConversionError
from .branch_mismatch import advice, set_mismatch
from .trace_state import current
from .variables import where


def set_changed(obj: set, snap: tuple) -> bool:
    """Whether a set holds other items than `snap` (by identity: items may be graph values,
    whose `==` is an op)."""
    return len(obj) != len(snap) or {id(x) for x in obj} != {id(x) for x in snap}


def sets_aside(log, values: list) -> list:
    """The items of each changed set after this branch, kept aside for `finish`; the op gets
    None in their place (a set has no tensor form)."""
    for i, slot in enumerate(log.slots):
        if slot.kind == "set":
            log.set_items.setdefault(i, []).append(values[i])
            values[i] = None
    return values


def set_values(log, values: list) -> list:
    """`values` with each changed set's items after the `if`: the branches' items where they
    are the same objects; otherwise the run decides which the set holds, which a set of
    Python values cannot express: refused here when the caller can reach the set, else its
    later reads are (`traced_keys.check_decided`), so a set nothing reads again (code after
    an early `return`) converts."""
    for i, items in log.set_items.items():
        a, b = items[-2:] if len(items) > 1 else (items[0], items[0])
        if len(a) == len(b) and all(x is y for x, y in zip(a, b)):
            values[i] = a
            continue
        slot = log.slots[i]
        if re.split(r"[.\[]", slot.path, maxsplit=1)[0] in log.read_after:
            raise ConversionError(
                f"{log._shown(slot.path)} {set_mismatch(a, b)} of an if whose condition is a "
                f"tensor ({where(log.src)}), and code after the if reads it: which items it "
                f"holds is decided when the program runs, and a set holds Python values. "
                f"{advice(slot)}", log.src)
        if any(id(slot.obj) in call.seen for call in current().call_logs):
            raise ConversionError(
                f"{log._shown(slot.path)} {set_mismatch(a, b)} of an if whose condition is a "
                f"tensor ({where(log.src)}), and the caller sees it after the call. "
                f"{advice(slot)}", log.src)
        current().undecided[id(slot.obj)] = (slot.obj, log._shown(slot.path), log.src)
        values[i] = a + tuple(x for x in b if all(x is not y for y in a))
    return values
