"""Side effects of a converted call on Python state, replayed on every call.

A converted function runs its Python once, while it is traced; later calls run only the
program. Whatever the trace changed on objects that outlive the call — attributes of the Layer
and of objects reachable from the arguments or the closure, closure cells, module globals,
containers — must still change on every call, as eager code would change it. The mutation log
(`operators/mutation.py`) walks those objects before the trace and diffs them after it; each
changed place is handled by what it now holds:

- a graph value (a tensor): the program computes it; `writeback.py` stores it as a Tensor
  after each call;
- a Python number (`int`/`float`) that was a number before (`self.step += 1`,
  `self.seen += x.shape[0]`, a `nonlocal` counter): it becomes program state. The function
  is traced again with the place holding a fed value that stands for the Python number; the
  program computes the new number, which is written back as a Python number of the original
  type after each call (so `if self.step % k == 0:` on it is a graph condition);
- any other Python value (a flag flipped, a string, `None` replaced by an object, items of a
  list changed or appended): the value the trace left is stored again after each call. Where
  the trace read the place (a read guard of `guards.py` names it), the program is also guarded
  by the value the trace started from: a call that starts from another value traces a new
  program, which replays the change from there; so is a place written inside a block that
  some path skips (`if t.any(): self.seen = True`: that path keeps the value the call found,
  `pyct/reads.py`). A place only written (`state.warm = True`) is not guarded, so one
  program serves every call; Python items only appended to a list the trace did not read
  (`self.history.append(step)`) are appended again after each call.

A number that cannot be program state (its traced code needs a Python value, e.g.
`range(self.n)`, or a step counter deciding a Python `if` around `opt.step()`) falls back to
the last rule; numbers the trace set to values computed from tensors (`meter.sum +=
loss.item()`) stay program state beside it where they can.
"""
from __future__ import annotations

import runtime as rt
from runtime import pytree

from . import guards, writeback
from .operators import mutation, tensor_flags
from .operators.branch_callables import refuse_kept
from .operators.made_sets import plain
from .operators.state_at_raise import is_bookkeeping, value_before
from .operators.str_arrays import kept_strs
from .operators.variables import Undefined, is_variable

_NUMBER_PLACES = ("attr", "cell", "global", "dict")
_GUARDED_PLACES = ("attr", "cell", "global", "dict", "list")
_MISSING = mutation.MISSING


class Promote(Exception):
    """Raised after a trace that changed Python numbers: trace again with them fed."""

    def __init__(self, slots, computed=()):
        super().__init__("trace again with numbers as program state")
        self.slots = slots
        self.computed = [s for s in slots if s.ident() in computed]  # (set to graph values)


class Number:
    """A Python number carried as program state: fed before each call, written back after."""

    __slots__ = ("slot", "feed", "type", "start")

    def __init__(self, slot, feed, start):
        self.slot, self.feed, self.type, self.start = slot, feed, type(start), start


def is_number(v) -> bool:
    return type(v) in (int, float)


def feed_numbers(slots, program) -> list:
    """Before the trace: each slot holds a fed value standing for its Python number."""
    numbers = []
    for i, s in enumerate(slots):
        value = s.get()
        dtype = "int64" if type(value) is int else "float64"
        name = f"state_{_plain(s.path)}"
        if program.find_var(name) is not None:
            name = program.fresh_name(f"{name}_")
        v = rt.static.data(name, [], dtype)
        v.python_scalar = True  # combined with a tensor, it takes the tensor's dtype
        numbers.append(Number(s, v, value))
        s.set(v)
    return numbers


def unfeed(numbers) -> None:
    """A trace failed: each fed place holds its Python number again."""
    for n in numbers:
        n.slot.set(n.start)


def _plain(path: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in path).strip("_")
    return out[:40] or "value"


def old_value(log, slot):
    """A slot's value in the log's snapshot (before the trace)."""
    return value_before(log, slot)


class Effects:
    """What one trace changed in Python values: `guards` (the values it started from, in
    `guards.py`'s form) and `writes` (slot, value) stored again after each call."""

    def __init__(self, numbers=()):
        self.guards: list = []
        self.writes: list = []
        self.numbers = list(numbers)  # `Number`s fed as program state
        self.new_places = False
        self.arg_writes: list = []  # (feed index, Variable): arguments written in place
        # the key of a run-time raise op -> what the call had changed where it raises
        # (`operators/state_at_raise.py`)
        self.raises: dict = {}
        self.rebound: list = []  # `writeback_fed.Fed`: tensor places the program reads, fed
        self.renewed: list = []  # `writeback_fed.Renewed`: places rebound, guarded by kind
        self.bound = frozenset()  # `bound_arguments`
        self.plans: list = []  # per write: how to make its value anew (`_fresh`), or None
        self.orders: list = []  # (dict, its keys in the trace's order): dicts (and `vars`) given new keys
        self.made: dict = {}  # id of a set converted code made -> its plain set (`plain`)

    def replay(self, fresh=None) -> None:
        """Set the writes again; `fresh` (id of a set the trace made -> this call's copy of
        it) is shared with the call's returned sets, so one stored and returned stays one."""
        fresh = {} if fresh is None else fresh
        plans = self.plans or [None] * len(self.writes)
        for (slot, value), plan in zip(self.writes, plans, strict=True):
            if isinstance(value, Appended):
                slot.obj.extend(value.anew(fresh))
            elif slot.kind == "list":
                slot.obj[:] = value
            else:  # (a list or dict the trace made: a new one, as each eager call makes)
                slot.set(_rebuilt(value, plan, fresh))
        for d, order in self.orders:  # new keys in eager's order (values the program
            _reorder(d, order)        # computed were written before these Python ones)

    def made_anew(self) -> dict:
        """id -> the list or dict that `replay` makes anew after each call (one the trace
        made): where the result holds it too, the result's object is stored (`fresh`)."""
        out: dict = {}

        def walk(x, plan):
            if plan is None or plan[1] is None:
                return
            if type(x) in (list, dict):
                out[id(x)] = x
            for k, v in (x.items() if type(x) is dict else enumerate(x)):
                walk(v, plan[1][k])
        for (_, value), plan in zip(self.writes, self.plans or [None] * len(self.writes)):
            for x, p in zip(value, value.plans) if isinstance(value, Appended) else (
                    (value, plan),):
                walk(x, p)
        return out


def _reorder(d: dict, order: tuple) -> None:
    """Put the keys of `d` that `order` names first, in its order (the rest after them)."""
    keys = list(d)
    want = [k for k in order if k in d]
    if keys[:len(want)] == want:
        return
    named = set(want)
    items = [(k, d[k]) for k in want] + [(k, d[k]) for k in keys if k not in named]
    d.clear()
    d.update(items)


def scan(log, numbers, fixed=(), known=None, copies=()) -> Effects:
    """After a trace: the changes of Python values, or `Promote` for changed numbers that
    are not program state yet. `numbers`: those fed as program state; `fixed`: slots of
    numbers that failed to be (they are guarded and replayed as Python values). `known`
    (ident -> slot, updated here): places earlier traces of the function changed; one this
    trace left as it was (or set to the value it had) is guarded by that value, since the
    trace may have written it without a visible change. `effects.new_places` is True when
    this trace found a place no earlier trace changed. `copies` (`writeback.Copy`): the
    trace's copies of list and dict arguments holding tensors, whose changes go to the
    caller's objects through `writeback.capture` (a number set there is not program state:
    each trace gets a new copy)."""
    effects = Effects(numbers)
    copied = {id(c.copy) for c in copies}
    promote, computed = [], set()
    fed = {n.slot.ident(): n for n in numbers}
    fixed = {s.ident() for s in fixed}
    changed = log.changed()
    read = writeback.read_places()
    if known is not None:
        idents = {s.ident() for s in changed}
        for ident, s in list(known.items()):
            if ident not in idents and ident not in fed:
                effects.guards.append(_guard(s, s.get() if s.kind != "list" else list(s.obj)))
    for s in changed:
        if s.kind not in _GUARDED_PLACES or is_bookkeeping(s) or id(s.obj) in copied:
            continue
        new = _strs_kept(s)
        if isinstance(new, Undefined):  # (converted code passed the place's absence along:
            new = mutation.MISSING      # set in a branch or loop body that did not run)
            if old_value(log, s) is mutation.MISSING:
                continue
        if s.ident() in fed:
            if is_number(new):  # set to a constant: stored again after each call
                effects.writes.append((s, new))
            continue
        old = old_value(log, s)
        if s.ident() not in fixed and s.kind in _NUMBER_PLACES and is_number(old) and \
                _stays_number(new):
            promote.append(s)
            if is_variable(new):
                computed.add(s.ident())
            continue
        if s.kind == "list":
            tail = writeback.appended_tail(s, old, new, read)
            if tail is not None:  # only appended to: the items again after each call
                if not any(_tensor_like(x) for x in tail):  # (else the program's output
                    effects.writes.append((s, Appended(tail, log.seen)))  # appends them)
            elif any(not _tensor_like(x) for x in new[len(old):]) or any(
                    a is not b and not _tensor_like(b) for a, b in zip(old, new)):
                effects.guards.append(_guard(s, old))
                if not any(_graph_value(x) for x in new):  # (else `writeback.py` writes
                    effects.writes.append((s, list(new)))  # the whole list, its Python
                    # items too, after each run: replayed, it would hold the trace's values)
            elif len(new) != len(old):  # a list grown by tensors: by its length
                effects.guards.append(_guard(s, old))
            continue
        # a container put under a new key: the key's absence decided it, read by code the
        # guards do not record (`d.setdefault("k", []).append(v)`, `if "k" not in d:`)
        new_key = s.kind == "dict" and old is _MISSING and type(new) in (list, dict)
        if mutation.graph_tree(new) and not writeback.existing(new, log, copied):  # written back
            if type(old) is list:  # a list become a tensor array: made from its items,
                if writeback.list_read(old, read):  # (else only appended to: `_Into`)
                    effects.guards.append((("list", old, None, s.path), "items",
                                           tuple(old)))
            elif new_key:
                effects.guards.append(_guard(s, old))
            continue
        if new_key or writeback.was_read(s, read):
            effects.guards.append(_guard(s, old))
        effects.writes.append((s, new))
    if promote:
        raise Promote(promote, computed)
    _plans(effects, log)
    effects.orders = _key_orders(changed, log, copied)
    if known is not None:
        for s, _ in effects.writes:
            if s.ident() not in known:
                known[s.ident()] = s
                effects.new_places = True
    return effects


def _stays_number(new) -> bool:
    """A number, or a graph value standing for one on every run (not a tensor, `meter["t"]
    += h.sum()`, nor a tensor where a graph loop ran and the number where it did not: written
    back as a tensor is, `writeback`)."""
    return is_number(new) or is_variable(new) and not new.is_array and \
        new.number_when is None and new.python_scalar


def flag_writes(effects: Effects, state, log) -> None:
    """Flags converted code set on tensors the program reads by reference
    (`operators.tensor_flags`: `p.stop_gradient = self.freeze`): the value the trace left is
    stored again after each call, and the program is guarded by the value it started from."""
    for obj, name, start, end in tensor_flags.written(state):
        seen = log.seen.get(id(obj))
        path = f"{seen[2]}.{name}" if seen and seen[2] else f"a tensor's .{name}"
        effects.writes.append((mutation.Slot(obj, "attr", name, path), end))
        effects.plans.append(None)
        effects.guards.append(guards.value_guard(("slot", obj, name, path), start))


def _plans(effects: Effects, log) -> None:
    """How to make each write's value anew after a call (`_fresh`), the sets converted code
    made in it plain sets first (`made_sets.plain`; one per made set, also where the call
    returns it: `effects.made`), as the caller sees them after an eager call."""
    memo = effects.made
    effects.writes = [(s, Appended([plain(x, memo) for x in v], log.seen) if isinstance(
        v, Appended) else plain(v, memo)) for s, v in effects.writes]
    effects.plans = [_fresh(v, log.seen) for _, v in effects.writes]


def _strs_kept(s):
    """The place's value; a str the run decides there (`str_arrays.StrItem`) becomes its id,
    an output the call writes back as the str."""
    new = s.get()
    refuse_kept(new, f"stored in {s.path}, which the caller keeps")
    kept = kept_strs(new, s.path)
    if kept is not new:
        s.set(kept)
    return kept


def _key_orders(changed, log, copied) -> list:
    """Each dict the trace gave a new key, and the attribute dict (`vars`) of each object it
    gave a new attribute, with its keys in the trace's (eager's) order."""
    grown = {}
    for s in changed:
        if (s.kind == "dict" or s.kind == "attr" and not isinstance(s.obj, type)) and \
                not is_bookkeeping(s) and id(s.obj) not in copied and \
                old_value(log, s) is _MISSING:
            grown[id(s.obj)] = s.obj if s.kind == "dict" else vars(s.obj)
    return [(d, tuple(d)) for d in grown.values()]


def bound_arguments(args, effects: Effects, out, kwargs=None) -> frozenset:
    """Indices of the list, tuple, dict and dataclass arguments (names of the keyword ones) in which the
    program's effects write, at any depth (`d["losses"].append(v)` appends to the list this
    call passed). Keyed by their values (`function_spec.py`), a later call passing equal
    ones in other objects (a fresh `{"losses": []}` per step) would reuse the program and
    write into these objects: such arguments are keyed by identity from then on."""
    objs = {id(s.obj) for s, _ in effects.writes} | {id(n.slot.obj) for n in effects.numbers}
    if type(out) is writeback.WithState:
        objs |= {id(s.obj) for s in out[1].slots}
    found = [i for i, a in enumerate(args) if pytree.is_container(a) and _holds_any(a, objs)]
    found += [k for k, a in (kwargs or {}).items() if pytree.is_container(a) and
              _holds_any(a, objs)]
    return frozenset(found)


def _holds_any(x, ids: set, depth: int = 0) -> bool:
    """`x` or a container in it (keyed by its value) is one of `ids` (an object keyed by
    identity, a Layer in a tuple, is not: a call passing another one traces anew)."""
    if depth > 6 or not pytree.is_container(x):
        return False
    return id(x) in ids or any(_holds_any(v, ids, depth + 1) for v in pytree.children(x)[0])


class Appended(list):
    """Items a trace appended to a list it did not read: appended again after each call,
    the lists, tuples and dicts the trace made in them made anew (`self.log.append({"step":
    n, "tags": []})` appends a new record on each eager call, not the same one again); the
    objects that existed before the call (`seen`: the mutation log's) are kept."""

    def __init__(self, items, seen):
        super().__init__(items)
        self.plans = [_fresh(x, seen) for x in items]

    def anew(self, fresh: dict) -> list:
        return [_rebuilt(x, p, fresh) for x, p in zip(self, self.plans, strict=True)]


def _fresh(x, seen, depth: int = 0):
    """None (keep `x`), or (type, {key: plan}) for a container the trace made ((set, None):
    a set, copied)."""
    t = type(x)
    if t is set and id(x) not in seen:  # (a set the trace made: its items are hashable)
        return set, None
    if t not in (list, tuple, dict) or id(x) in seen or depth > 6:
        return None
    items = x.items() if t is dict else enumerate(x)
    return t, {k: _fresh(v, seen, depth + 1) for k, v in items}


def _rebuilt(x, plan, fresh: dict):
    if plan is None:
        return x
    t, parts = plan
    if parts is None or id(x) in fresh:  # (a set; a list or dict the result holds too)
        return fresh.setdefault(id(x), t(x))
    if t is dict:
        return {k: _rebuilt(v, parts[k], fresh) for k, v in x.items()}
    return t(_rebuilt(v, parts[i], fresh) for i, v in enumerate(x))


def _tensor_like(x) -> bool:
    """A tensor, or a list / tuple / dict holding a graph value (`{"call": n, "loss":
    loss.item()}` appended to a log): `writeback.py` writes it back, so it is not replayed."""
    return _graph_value(x) or hasattr(x, "_data") and hasattr(x, "stop_gradient")


def _graph_value(x, depth: int = 0) -> bool:
    """A graph value, or a list / tuple / dict holding one."""
    if type(x) in (list, tuple, dict) and depth < 6:
        return any(_graph_value(v, depth + 1) for v in (x.values() if type(x) is dict else x))
    return is_variable(x)


def _guard(slot, old) -> tuple:
    kind = slot.kind
    if kind == "attr":
        place = _attr_place(slot)
    elif kind == "global":
        place = ("global", slot.obj, slot.key)
    elif kind == "cell":
        place = ("cell", slot.obj, slot.path)
    elif kind == "dict":
        place = ("item", slot.obj, slot.key, slot.path)
    else:
        return (("list", slot.obj, None, slot.path), "items", tuple(old))
    return guards.value_guard(place, guards.MISSING if old is _MISSING else old)


def _attr_place(slot) -> tuple:
    """An attribute's guard place: a class's own namespace is read as the "class" place."""
    kind = "class" if isinstance(slot.obj, type) else "attr"
    return (kind, slot.obj, slot.key, slot.path)


def number_guards(numbers) -> list:
    """Each fed number keeps its Python type (a float where an int was traces again)."""
    out = []
    for n in numbers:
        s = n.slot
        place = {"attr": _attr_place(s), "global": ("global", s.obj, s.key),
                 "cell": ("cell", s.obj, s.path),
                 "dict": ("item", s.obj, s.key, s.path)}[s.kind]
        out.append((place, "type", n.type))
    return out
