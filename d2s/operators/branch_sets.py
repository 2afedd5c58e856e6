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
from runtime.core import active_builder, is_tensor

from ..errors import ConversionError
from ..pyct import loader
from .branch_mismatch import advice, set_mismatch
from .trace_state import current
from .variables import Undefined, is_variable, user_origin, where


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
        if id(slot.obj) in getattr(log, "set_flagged", ()):  # (its items' flags: `flagged`)
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


def set_flags(container) -> dict:
    """{item: presence flag} of a set whose items a tensor `if` decides (`flagged`), or {}
    for any other value (the flags of the latest `if` whose flags are readable here)."""
    state = current()
    entry = state.set_flags.get(id(container))
    if entry is None or entry[0] is not container or id(container) not in state.undecided:
        return {}
    flags = entry[1][-1] if entry[1] else {}
    if not all(map(_visible, flags.values())):  # (an `if` in a graph loop's body: per trip)
        _, path, if_src = state.undecided[id(container)]
        src = user_origin(3)
        raise ConversionError(
            f"the set {path} ({where(src)}) holds items that an if whose condition is a "
            f"tensor ({where(if_src)}) inside a loop whose condition is a tensor decides on "
            "each trip: a set holds Python values, which one program cannot track per trip. "
            "Keep what it tracks in a tensor (a bool mask, rt.unique).", src)
    items = getattr(container, "_s", container)  # (a made set's own; one discarded since:
    return {k: f for k, f in flags.items() if k in items}  # on no path)


def drop_branch_flags() -> None:
    """At the end of a traced branch (its flags given out, `present`): the flags an `if`
    inside it made (graph values of the branch's block) are dropped, so the other branch,
    and code after the `if`, read the flags from before it, or the `if`'s own."""
    b = active_builder()
    for entry in current().set_flags.values():
        while entry[1] and any(f.block is b.block for f in entry[1][-1].values()):
            entry[1].pop()


def _visible(v) -> bool:
    """Whether the graph value `v` is of the block being built or one around it (flags an
    `if` inside another `if`'s branch made are not, once that branch is traced)."""
    b = active_builder()
    block = b.block if b is not None else None
    while block is not None:
        if v.block is block:
            return True
        block = block.parent_block
    return False


def flag_outputs(log, outs: dict, side: int) -> None:
    """Sets converted code made (`made_sets`, never the caller's) whose Python items the
    branches of a tensor `if` leave different (or an `if` inside a branch decided, or an
    earlier one flagged): each such item gets a presence flag output of the `cond`, added
    to `outs` as ("set", id(set), item) -> (set, item) (`branch_keys.branch_flags`, the
    `if` traced again); after it the set holds the union, its flags those outputs
    (`flagged`), so `len()`, `in` and `bool()` follow the run. Only where the block carries
    flags out (`key_flags.grows_here`, checked by the caller)."""
    sets = [o for o, kind, _, _ in log.seen.values() if kind == "set" and _made(o)]
    if not sets:
        return
    mine = {id(s): (frozenset(s._s), set_flags(s)) for s in sets}
    if side == 0:
        log.set_side0 = mine
        return
    for s in sets:
        items1, flags1 = mine[id(s)]
        items0, flags0 = getattr(log, "set_side0", {}).get(id(s), (items1, {}))
        changed = (items0 ^ items1) | set(flags0) | set(flags1)
        if not changed or any(map(_computed, items0 | items1)):
            continue
        for x in sorted(changed, key=repr):
            outs.setdefault(("set", id(s), x), (s, x))
        log.__dict__.setdefault("set_flagged", set()).add(id(s))


def present(s, item):
    """The flag output of `item` in the traced branch: whether the set holds it there."""
    if item not in s._s:
        return rt.full([], False, "bool")
    flag = set_flags(s).get(item)
    return rt.full([], True, "bool") if flag is None else flag


def flagged(s, flags: dict, log) -> None:
    """After the `if`: `s` holds the union, each of `flags`' items where its flag holds."""
    state = current()
    state.undecided[id(s)] = (s, _path(log, s), log.src)
    entry = state.set_flags.get(id(s))
    kept = entry[1] if entry is not None and entry[0] is s else []
    state.set_flags[id(s)] = (s, [*kept, flags])


def _path(log, s) -> str:
    entry = log.seen.get(id(s))
    return log._shown(entry[2]) if entry is not None else "the set"


def _computed(x) -> bool:
    """An item that is, or holds, a value the converted code computed."""
    return is_variable(x) or is_tensor(x) or type(x) in (tuple, frozenset) and any(
        map(_computed, x))


def _made(s) -> bool:
    return type(s).__module__ == f"{__package__}.made_sets"


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
