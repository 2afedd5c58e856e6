"""A Python set that the code of a tensor `if` or graph loop changes (`mutation.Log` tracks
sets in graph blocks: every trace of a branch or body starts from the set as it was, and a
changed set is a slot of kind 'set' whose value is its items as a tuple).

The `cond` op gets None in a set's place (a set has no tensor form); `set_values` decides
what the set holds after the `if`: the branches' items where they are the same objects. A set
the branches leave holding other items is refused at the `if` when code after it can read
the set (through a name the converter found live there, `read_after`, or another local name
holding it that code after the `if` reads or a function of the user's closes over, `_alias`)
or the caller can: no read of it could be decided, and reads of a set are not all converted
code (`s | t`, a comprehension, `str(s)`, a library call). Else it
holds the union, marked undecided, with its converted reads refused
(`traced_keys.check_decided`); an `if` around it treats it as changed differently by its
branches (`undecided_aside`). `mutation_loop` refuses a set a graph loop body changes.
"""
from __future__ import annotations

import dis
import re
import sys
import types

import runtime as rt
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


def undecided_ids() -> frozenset:
    """The ids of the sets an `if` left undecided so far in this trace."""
    return frozenset(current().undecided)


def undecided_aside(log) -> frozenset:
    """At the end of a branch: the ids of the sets an `if` inside it left undecided, moved
    from the trace's marks to the block's `log.doubts` (the branch's end puts its sets back,
    and a branch traced after it must not find the mark); `set_values` marks them again."""
    undecided = current().undecided
    here = {k: undecided.pop(k) for k in list(undecided) if k not in log.undecided_before}
    log.doubts.update(here)
    return frozenset(here)


def sets_aside(log, values: list, doubted: frozenset) -> list:
    """The items of each changed set after this branch, kept aside for `finish` with whether
    an `if` inside the branch left them undecided (`doubted`); the op gets None in their
    place (a set has no tensor form)."""
    for i, slot in enumerate(log.slots):
        if slot.kind == "set":  # (by the slot, not its index: a branch traced again may
            log.set_items.setdefault(slot.ident(), []).append(  # find more)
                (values[i], id(slot.obj) in doubted))
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
        (a, doubt_a), (b, doubt_b) = items[-2:] if len(items) > 1 else (items[0], items[0])
        same = len(a) == len(b) and all(x is y for x, y in zip(a, b))
        if same and not (doubt_a or doubt_b):
            values[i] = a
            continue
        why = set_mismatch(a, b) if not same else (
            "is a set whose items a nested if decides on some inputs only, in a branch")
        if any(id(slot.obj) in call.seen for call in current().call_logs):
            raise ConversionError(
                f"{log._shown(slot.path)} {why} of an if whose condition is a "
                f"tensor ({where(log.src)}), and the caller sees it after the call. "
                f"{advice(slot)}", log.src)
        union = a + tuple(x for x in b if all(x is not y for y in a))
        if not (same or doubt_a or doubt_b) and _flag_items(log, slot, a, b):  # (`len()` and `in` follow the run)
            values[i] = union
            continue
        root = re.split(r"[.\[]", slot.path, maxsplit=1)[0]
        if root in log.read_after:
            raise ConversionError(
                f"{log._shown(slot.path)} {why} of an if whose condition is a "
                f"tensor ({where(log.src)}), and code after the if can read it: which items "
                f"it holds is decided when the program runs. {advice(slot)}", log.src)
        alias = _alias(slot.obj, root)
        if alias is not None:
            raise ConversionError(
                f"{log._shown(slot.path)} {why} of an if whose condition is a "
                f"tensor ({where(log.src)}), and code after the if can read it as {alias}: "
                f"which items it holds is decided when the program runs. {advice(slot)}",
                log.src)
        current().undecided[id(slot.obj)] = (slot.obj, log._shown(slot.path), log.src)
        values[i] = union
    sets = {id(slot.obj) for slot in log.slots if slot.kind == "set"}
    current().undecided.update({k: v for k, v in log.doubts.items() if k not in sets})
    return values


def _flag_items(log, slot, a: tuple, b: tuple) -> bool:
    """A set converted code made (`made_sets`, never the caller's) that the branches of a
    top-level tensor `if` leave holding other Python values (no computed ones; no set an
    earlier `if` decided): it holds their union, each item the branches differ on with a
    presence flag (the condition, or its negation), so `len()` and `in` follow the run
    (`builtins.len_`, `logical.in_`); its other reads are refused at their line (it is
    undecided: `traced_keys.check_decided`, `made_sets`). True if so."""
    pred, state = getattr(log, "pred", None), current()
    entry = state.set_flags.get(id(slot.obj))
    old = entry[1] if entry is not None and entry[0] is slot.obj else None  # (an earlier
    # `if` decided its items: each flag then holds where both `if`s keep the item)
    if type(slot.obj).__module__ != f"{__package__}.made_sets" or not is_variable(pred) or \
            pred.block is not pred.block.program.global_block() or \
            id(slot.obj) in state.undecided and old is None:
        return False
    try:
        in_a, in_b = frozenset(a), frozenset(b)
    except TypeError:  # (an unhashable item)
        return False
    if any(is_variable(x) or is_tensor(x) for x in in_a | in_b):
        return False
    flags = dict(old or {})
    other = rt.logical_not(pred) if in_b - in_a else None
    for x, here in [(x, pred) for x in in_a - in_b] + [(x, other) for x in in_b - in_a]:
        flags[x] = rt.logical_and(flags[x], here) if x in flags else here
    state.undecided[id(slot.obj)] = (slot.obj, log._shown(slot.path), log.src)
    state.set_flags[id(slot.obj)] = (slot.obj, flags)
    return True


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
    code, later = frame.f_code, _read_later(frame)
    for name, value in frame.f_locals.items():
        if later is not None and name not in later and (name in code.co_varnames or (
                name in code.co_cellvars and not _user_closes_over(code, name))):
            continue  # (a local no code after the `if` reads, nor a function of the user's)
        if name != root and _holds(value, obj):
            return name
    return None


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
# the functions the converter makes for the branches of an `if` and the parts of a loop, which
# run only inside their own `ifelse` / loop call (`converters/ifelse.py`, `loops.py`)
_BLOCK_FUNCTION = re.compile(r"_(if_true|if_false|loop_body|loop_test|for_body)_\d+")


def _user_closes_over(code, name: str) -> bool:
    """Whether a function defined in `code` other than a branch or loop function (or one
    inside such a function) reads the cell `name`: it may be called after the `if`."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and name in c.co_freevars and (
                not _BLOCK_FUNCTION.fullmatch(c.co_name) or _user_closes_over(c, name)):
            return True
    return False


def _read_later(frame) -> frozenset | None:
    """The names `frame`'s code may read after the instruction running now (the `if`), or
    None where it may run earlier code again (a jump back: a Python loop around the `if`)."""
    names = set()
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset <= frame.f_lasti:
            continue
        if ins.opcode in _JUMPS and isinstance(ins.argval, int) and ins.argval <= frame.f_lasti:
            return None
        if ins.opname.startswith("LOAD_"):
            names.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    return frozenset(n for n in names if isinstance(n, str))


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
