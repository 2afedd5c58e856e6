"""The mutation log for graph loops (see `d2s.operators.mutation`): objects a loop body
changes become extra loop variables of the `while` op; a list a closure variable holds, grown
in a graph loop, becomes a tensor array that variable carries (also across a tensor `if`)."""
from __future__ import annotations

import copy

import runtime as rt
from runtime.program.builder import current_builder

from ..pyct.qnames import is_composite
from . import tensor_items
from .aliases import other_references
from .branch_arrays import array_paths
from .held_lists import holder, if_arrays, remember
from .lists import PYTHON_ITEM_DTYPES, is_structure, number_pairs
from .loop_initial import number_items
from .mutation import MISSING, Log, StateChangeError, freeze, retarget
from .trace_state import current
from .variables import Undefined, is_variable, where


class Loop:
    """The changed objects of a graph loop's body as extra loop variables: the body is traced
    once in a scratch block to find them (unless an earlier scratch trace did); each trace of
    the test / body starts by setting them to the loop's parameters (`enter`), the body's
    trace returns their values (`leave`), and after the op they take its results (`finish`)."""

    def __init__(self, log: Log, body, state: list, carried: list, new_key=None):
        self.log = log
        self.state = state
        self.carried = carried
        self.entered: list = []
        self.unchanged: set = set()
        self.rebound: set = set()  # aliases the body rebinds after changing them in place
        # attribute state (`o.t`) is carried by name: each trace of the body sets it from a
        # parameter, which is not a change the log carries too
        self.by_name = {n for n in log.names or () if is_composite(n)}
        for v in state:  # graph values made for the loop (tensor arrays): restored only
            if is_variable(v) and id(v) not in log.seen:
                log.seen[id(v)] = (v, "private", "", dict(vars(v)))
        probed = {}  # a place's ident -> what the probe trace of the body left there
        if not log.probed:
            b = current_builder()
            try:
                with b.scratch():  # objects the user can reach as they are, others copied
                    body(*[v if id(v) in log.seen else copy.copy(v) for v in state])
                    log.changed()
                    probed = {s.ident(): _snapshot(s.get()) for s in log.slots}
            finally:
                log.scratch_end(probed=True)
        self._changed()
        arrays = {}  # a place's ident -> the tensor array the list it holds becomes
        for slot in list(log.slots):
            if slot.grew:
                try:
                    place, array = _closure_array(log, slot)
                except StateChangeError:
                    _refuse_grown_and_rebound(slot, state, log.src)
                    raise
                log.carry_by_name(slot.obj)  # the list itself stays as it was
                if place.ident() not in log._ids:
                    log.slots.append(place)
                    log._ids.add(place.ident())
                arrays[place.ident()] = array
        self.slots = list(log.slots)
        _refuse_sets(self.slots, log.src)
        for s in self.slots:  # (a key the body first sets: `new_key` may give it a value)
            if new_key is not None and s.kind == "dict" and s.get() is MISSING:
                new_key(s, probed.get(s.ident()))
        self.initial = [arrays[s.ident()] if s.ident() in arrays else
                        _loop_value(s.path, freeze(s.get()), log.src) for s in self.slots]
        # slot index -> a Python number the body makes a tensor of another shape or dtype:
        # it fills that tensor on entry (`unbound.tensor_by_loop` checks a loop of no trips)
        self.numbers = {j: v for j, (s, v) in enumerate(zip(self.slots, self.initial))
                        if _filled_number(v, probed.get(s.ident()))}
        for j, v in self.numbers.items():
            p = probed[self.slots[j].ident()]
            self.initial[j] = _full_like(p, v)
        self.kinds: dict = {}  # slot index -> a Python number the body gives another type
        for j, (s, v) in enumerate(zip(self.slots, self.initial)):  # (a helper's `stats[
            p = probed.get(s.ident())  # "loss"] += loss.item()`: Python's precision, as a
            if _kept_number(v, p):  # carried dict's item)
                self.initial[j] = _python_number(v)
            elif _number_of_other_type(v, p):  # (`stats["n"] += 0.5`, `n` an int: its
                self.initial[j], self.kinds[j] = _python_number(v, p), v  # type flags)
            elif type(v) is dict and type(p) is dict:  # (`self.state` of a nested item)
                self.initial[j] = number_items(v, p)
        self.aliases = [i for i in carried if any(
            s.obj is state[i] and s.kind in ("var", "list") for s in self.slots)]

    def initial_state(self, carried: list) -> list:
        """The carried state's initial values; an object the body changes in place is
        copied first (each trace of the body changes it)."""
        return [copy.copy(self.state[i]) if i in self.aliases else self.state[i]
                for i in carried]

    def enter(self, merged: list, extras) -> list:
        self.entered = [(v, getattr(v, "name", None)) for v in merged]
        if not self.slots:
            return merged
        for slot, v in zip(self.slots, extras):
            slot.set(v)
        for i in self.aliases:  # the same Python object as a changed one: keep it so
            # It takes the value the loop carries under its name (the same as its slot's
            # while the body only changes it in place; a body that also rebinds the name
            # changes, from the second trip on, the value the name had at its start)
            own = next((s for s in self.slots if s.obj is self.state[i]), None)
            if own is not None and _same_kind(own.kind, merged[i], self.state[i]):
                own.set(list(merged[i]) if own.kind == "list" else merged[i])
            merged[i] = self.state[i]
        return merged

    def leave(self, outs: list, like: list) -> list:
        # carried Variables the body returned as it got them: the loop leaves them unchanged,
        # so the user's object (aliases too) stays the result
        self.unchanged = {i for i, v in zip(self.carried, outs) if is_variable(v) and v is
                          self.entered[i][0] and v.name == self.entered[i][1]}
        outs = [align(v, w) for v, w in zip(outs, like)]
        new = self._changed()  # (also where the probe found no change)
        if new:
            self.log.restore()
            raise StateChangeError(
                f"{new[0].path} is changed inside a loop whose condition is a tensor "
                f"({where(self.log.src)}) only once its values have their loop shapes: a "
                "Python decision on a value's shape or stop_gradient (`if h.shape[0] > 1:`, "
                "`if not h.stop_gradient:`) differs between the first trip and later ones, "
                "and one loop body cannot take both. Decide it with a tensor condition "
                "(`if rt.shape(h)[0] > 1:`) or a Python value fixed before the loop",
                self.log.src)
        if not self.slots:
            return outs
        self._check_aliases_kept(outs)
        result = [freeze(v) for v in outs] + [align(v, w) for v, w in zip(
            self.log.values(), self.initial)]
        self.log.restore()  # the objects hold their values from before the loop again
        return result

    def _changed(self) -> list:
        """The log's newly changed places but those carried by name (kept known, so never
        new again)."""
        new = self.log.changed()
        self.log.slots = [s for s in self.log.slots if s.path not in self.by_name]
        return [s for s in new if s.path not in self.by_name]

    def _check_aliases_kept(self, outs: list) -> None:
        """A name whose object the body changes in place (`h[i] = v`) and then rebinds
        (`h = h * 2`): in eager code only the first trip changes the object the loop started
        with, later trips change the new values. The loop carries the name's value (`enter`),
        so that converts where nothing else reads the starting object; where something does
        (another name, the caller), one loop body cannot say which trip it is: refused."""
        self.rebound = set()
        for i, v in zip(self.carried, outs):
            if i in self.aliases and v is not self.state[i]:
                path = next(s.path for s in self.slots if s.obj is self.state[i])
                others = other_references(self.state[i], path, current().logs(self.log))
                if not others:
                    self.rebound.add(i)  # (the loop's starting value: read by nothing else)
                    continue
                what = "tensor" if is_variable(self.state[i]) else "list"
                seen = next((o for o in others if o.startswith("the local name")),
                            f"another reference (the caller's {what}, a container)")
                copy_it = f"{path}.clone()" if what == "tensor" else f"list({path})"
                raise StateChangeError(
                    f"'{path}' is changed in place and rebound in the body of a loop whose "
                    f"condition is a tensor ({where(self.log.src)}), and the {what} the loop "
                    f"started with is also {seen}: eager code changes that {what} in the "
                    "first trip only, which one program cannot express. Start the loop from "
                    f"a copy (`{path} = {copy_it}` before the loop, or as the body's first "
                    "line), or build the new value out of place", self.log.src)

    def check_dict_kept(self, name: str, original: dict, given: dict, before: dict,
                        out) -> None:
        """A dict the body changes in place (`d["a"] = v`) and then rebinds (`d = {...}`):
        the loop carries a copy of it, so that converts unless something else reads the dict
        the loop started with (eager code changes it in the first trip only)."""
        if out is given or (given.keys() == before.keys() and all(
                given[k] is v for k, v in before.items())):
            return
        others = other_references(original, name, current().logs(self.log))
        if others:
            seen = next((o for o in others if o.startswith("the local name")),
                        "another reference (the caller's dict, a container)")
            raise StateChangeError(
                f"'{name}' is changed in place and rebound in the body of a loop whose "
                f"condition is a tensor ({where(self.log.src)}), and the dict the loop started "
                f"with is also {seen}: eager code changes that dict in the first trip only, "
                "which one program cannot express. Start the loop from a copy (`"
                f"{name} = dict({name})` before the loop), or build the new dict out of place",
                self.log.src)

    def restore(self, value):
        """After a trace of the test: the objects hold their values from before the loop."""
        if self.slots:
            self.log.restore()
        return value

    def renew(self, obj, new) -> None:
        """The carried Variable `obj`, which the body changes in place (`lst.append(v)` on
        an array), widened before the loop (an array of ints now held as `[value, kind]`
        pairs, the body appending a float): the object itself takes `new`'s value, so the
        body changes it in place as before and each alias of it sees the wider value (made
        in the block around the loop); its snapshot and its slot's initial value follow."""
        retarget(obj, dict(vars(new)))
        entry = self.log.seen.get(id(obj))
        if entry is not None:  # (`restore` puts the new value back, `changed` compares)
            self.log.seen[id(obj)] = entry[:3] + (dict(vars(obj)),)
        for j, slot in enumerate(self.slots):
            if slot.obj is obj and slot.kind == "var":
                self.initial[j] = freeze(obj)

    def finish(self, out: list, extras) -> list:
        for i in self.unchanged:
            if is_variable(self.state[i]):
                out[i] = self.state[i]
        if not self.slots:
            return out
        self.log.restore()
        self.log.write(list(extras))
        for i in self.aliases:
            if i not in self.rebound:
                out[i] = self.state[i]
        return out


def _same_kind(kind: str, carried, obj) -> bool:
    """Whether the loop's carried value can stand for the changed object `obj` (a tensor
    for a tensor, a list as long for a list)."""
    if kind == "var":
        return is_variable(carried)
    return kind == "list" and type(carried) is list and len(carried) == len(obj)


def _refuse_grown_and_rebound(slot, state: list, src) -> None:
    """A list the loop carries under a name, whose length the body changes in place and which
    it then rebinds (`out.append(v)`, then `out = out[1:]`), that no one place holds: what
    to write instead."""
    if any(slot.obj is v for v in state):
        raise StateChangeError(
            f"the list {slot.path} changes length in place (append, pop, ...) and is then "
            f"rebound in the body of a loop whose condition is a tensor ({where(src)}): the "
            "list the loop started with changes length in the first trip only, and d2s "
            "cannot make it a tensor array that the name carries. Build "
            f"the new list out of place (`{slot.path} = {slot.path}[1:] + [v]`), or change "
            "this list in place only", src)


def _refuse_sets(slots: list, src) -> None:
    """A set the body changes: eager code changes it on each trip the run makes, and a set
    (of Python values) has no tensor form a `while` op could carry."""
    for slot in slots:
        if slot.kind == "set":
            raise StateChangeError(
                f"the set {slot.path} is changed inside a loop whose condition is a tensor "
                f"({where(src)}): eager code changes it on each trip the run makes, and a set "
                "holds Python values, which a program cannot change per trip. Keep what it "
                "tracks in a tensor (a bool mask, rt.unique), or loop over a Python range.", src)


def _closure_array(log: Log, slot):
    """A list grown (or shrunk) inside a graph loop through another name than a local one (a
    helper, a closure, `self.hist.append(v)`, `cache["outs"].append(h)`): the one place that
    holds it (`held_lists.holder`: a closure variable, an attribute, a dict entry, a global;
    nothing else may refer to the list) becomes a tensor array carried by the loop (the list
    object is left as it was, unreachable from the traced code). Returns (the place's slot,
    the array); anything else is refused."""
    src = log.src
    lst = slot.obj
    sample = slot.sample if slot.sample is not None else lst[-1] if lst else None
    what = "changes length inside a loop whose condition is a tensor"
    numbers = _python_numbers(sample, lst)
    mixed = tensor_items.items_dtype([*lst, sample]) if sample is not None else None
    if mixed is not None:  # (Python numbers and 0-d tensors: `tensor_items`)
        return holder(log, lst, what + " through another name than its own"), \
            tensor_items.tensor_items_array(list(lst), mixed)
    why = "" if numbers else (
           "its items are not tensors" if not (is_variable(sample) or _tensor(sample)) else
           "" if not any(not (is_variable(x) or _tensor(x)) for x in lst) and not
           is_structure(sample) else "its items are not all tensors of one type")
    if why:
        path = log.seen[id(lst)][2] if id(lst) in log.seen else "(a list)"
        raise StateChangeError(
            f"the list {path} {what} through another name than its own ({where(src)}), and "
            f"{why}; one static program cannot grow it there. Append tensors of one type, or "
            "collect the values in a tensor.", src)
    place = holder(log, lst, what + " through another name than its own")
    if numbers == "several":  # (ints beside floats or bools: each item's type beside it)
        return place, number_pairs(list(lst))
    if not is_variable(sample):  # (`self.hist.append(0.5)`: a Python number)
        sample = rt.full([], sample, PYTHON_ITEM_DTYPES[type(sample)])
    array = rt.static.create_array(sample.dtype, initialized_list=list(lst))
    if numbers:
        array.python_items = True  # (`box.hist.append(bool(t))`: Python bools eagerly)
    if not lst:
        array._static_shape = tuple(sample.shape)
    return place, array


def _python_numbers(sample, lst):
    """Whether a list grown with `sample` holds Python numbers in eager code (`bool(t)`,
    `int(t)`, `0.5` appended; the numbers it held before the call): "one" type (the numbers
    it held before the call of the same type as a graph value `sample`), "several", or None."""
    items = [*lst, sample]
    if not all(type(x) in PYTHON_ITEM_DTYPES or is_variable(x) and x.python_scalar and not
               x.is_array and not x.shape for x in items):
        return None
    kinds = {"run" if is_variable(x) and (x.float_when is not None or x.bool_when is not None)
             else x.dtype.name if is_variable(x) else PYTHON_ITEM_DTYPES[type(x)]
             for x in items}
    return "one" if len(kinds) == 1 and "run" not in kinds else "several"


def _filled_number(v, probe) -> bool:
    """A Python number (`self.total = 0`) that the body makes a tensor other than the number's
    own kind (a float tensor, a tensor of a shape): the loop carries the tensor."""
    if type(v) not in (int, float) or not is_variable(probe) or probe.is_array or getattr(
            probe, "python_scalar", False) or any(d < 0 for d in probe.shape):
        return False
    own = "int64" if type(v) is int else "float32"
    return bool(probe.shape) or probe.dtype.name != own


def _snapshot(v):
    """A dict as the probe trace left it (the trace's changes are undone after it)."""
    return freeze(v) if type(v) is dict else v


def _kept_number(v, probe) -> bool:
    """A Python number the body keeps a Python number of its type (`+= loss.item()`)."""
    return type(v) in PYTHON_ITEM_DTYPES and is_variable(probe) and getattr(
        probe, "python_scalar", False) and not probe.shape and not probe.is_array and \
        probe.number_when is None and probe.float_when is None and probe.bool_when is None \
        and probe.dtype.name == PYTHON_ITEM_DTYPES[type(v)]


def _number_of_other_type(v, probe) -> bool:
    """A Python number the body makes a Python number of another type, or of a type the
    run decides (`loop_number_items` carries the flags)."""
    if not (type(v) in PYTHON_ITEM_DTYPES or _plain_number(v)):
        return False
    if type(probe) in PYTHON_ITEM_DTYPES:  # (`stats["n"] += 0.5`)
        return _dtype(probe) != _dtype(v)
    return _plain_number(probe, flagged=True) and (_dtype(probe) != _dtype(v) or (
        probe.float_when is not None or probe.bool_when is not None))


def _plain_number(v, flagged=False) -> bool:
    """A graph value standing for a Python number of one type (of a type the run decides
    where `flagged`)."""
    return is_variable(v) and getattr(v, "python_scalar", False) and not v.shape and \
        not v.is_array and v.number_when is None and v.dtype.name in _RANKS and (
            flagged or v.float_when is None and v.bool_when is None)


def _dtype(v) -> str:
    return PYTHON_ITEM_DTYPES[type(v)] if type(v) in PYTHON_ITEM_DTYPES else v.dtype.name


_RANKS = ("bool", "int64", "float64")


def _python_number(v, probe=None):
    """The Python number `v` (or a graph value standing for one) as the loop carries it: of
    Python's precision, the wider of its type and the `probe`'s."""
    own = _dtype(v)
    dtype = own if probe is None else max(own, _dtype(probe), key=_RANKS.index)
    out = rt.cast(v, dtype) if is_variable(v) else rt.full([], v, dtype)
    out.python_scalar = True
    return out


def _full_like(like, number):
    return rt.full(list(like.shape), number, like.dtype)


def _tensor(x) -> bool:
    return isinstance(x, rt.Tensor)


def _loop_value(path, v, src):
    if v is MISSING or isinstance(v, Undefined):
        raise StateChangeError(
            f"{path} is first set inside a loop whose condition is a tensor ({where(src)}); in "
            "eager code it exists after the loop only when the loop ran at least once, which "
            "the tensor condition decides when the program runs, and one static program has "
            "one set of keys and attributes. Set it before the loop to a value of the same "
            "type and shape", src)
    return v


def align(v, like):
    """`v` with its dicts' keys in `like`'s order (a loop body that pops and re-inserts a
    key leaves the same dict in another order; the loop op compares structures in order)."""
    if isinstance(v, dict) and type(like) is type(v) and v.keys() == like.keys():
        if type(v) is dict:
            return {k: align(v[k], like[k]) for k in like}
        out = copy.copy(v)  # (a dict subclass keeps its type)
        out.clear()
        for k in like:
            out[k] = align(v[k], like[k])
        return out
    if type(v) in (list, tuple) and type(like) is type(v) and len(v) == len(like):
        return type(v)(align(a, b) for a, b in zip(v, like))
    return v


def cell_arrays(log: Log, given: list, n: int, arrays: dict) -> bool:
    """Places (changed objects after the `n` state outputs: closure variables, attributes,
    dict entries, globals) that hold a list of tensors in one branch and a tensor array in
    the other (a graph loop in that branch made it one), or lists of different lengths: when
    the list is held by that place only, it becomes an array in both branches (added to
    `arrays`). Then lists changed in place whose lengths differ (`held_lists.if_arrays`).
    True if any."""
    if len(given) != 2:
        return False
    found = {}
    for j, slot in enumerate(log.slots):
        i = n + j
        if slot.kind not in _PLACES or (i, ()) in arrays or i >= min(map(len, given)):
            continue
        paths = [(p, dt) for p, dt in array_paths(given[0][i], given[1][i], ()) if not p]
        if not paths or isinstance(paths[0][1], tuple):  # (not lists of structures)
            continue
        lst, container = _before(log, slot)
        if is_variable(lst) and lst.is_array:  # (an array already: `self.cache = []` in
            found[(i, ())] = paths[0][1]  # one branch of a later turn of an unrolled loop)
            continue
        if not isinstance(lst, list) or any(s.obj is lst for s in log.slots):
            continue
        # (the branches rebound the place, not changed the list: a list another reference
        # holds stays as it was, as in eager code, and the place gets a list of its own)
        if not other_references(lst, slot.path if slot.kind == "cell" else "",
                                current().logs(log), holder=container):
            remember(slot, lst)
        found[(i, ())] = paths[0][1]
    arrays.update(found)
    return bool(found) | if_arrays(log, given, n, arrays)


_PLACES = ("cell", "dict", "attr", "global")


def _before(log: Log, slot):
    """What `slot`'s place held before the block, and the dict holding it (None for a
    cell)."""
    if slot.kind == "global":
        entry = log.seen.get(("globals", id(slot.obj)))
        return (entry[3].get(slot.key) if entry else None), slot.obj
    entry = log.seen.get(id(slot.obj))
    if entry is None:
        return None, None
    if slot.kind == "cell":
        return entry[3], None
    snap = entry[3] if isinstance(entry[3], dict) else {}
    return snap.get(slot.key), (slot.obj if slot.kind == "dict" else vars(slot.obj))
