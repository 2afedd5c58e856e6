"""Tracing a call of a StaticFunction (its `TraceTarget`) into a program (a `Trace`): feeds for
the call's tensors, the converted function run under `program_guard` with its guards recorded
(`guards.py`), the Python state it changes found and handled (`side_effects.py`,
`writeback.py`), the Layer's forward hooks around it, and a recursion whose depth depends on a
tensor named.
"""
from __future__ import annotations

import dataclasses
import sys
import types
from typing import Any

import numpy as np

import runtime as rt
from runtime import pytree
from runtime.core import is_eager_tensor as _is_tensor
from runtime.core import is_variable as _is_variable
from runtime.core import settings_read
from runtime.ops.array_number_kinds import holds_tensor_items
from runtime.ops.arrays import array_pack, holds_python_numbers
from runtime.program.builder import current_builder
from runtime.program.origin import format_origin

from . import errors, guards, logging_utils, owned_results, side_effects, writeback
from . import writeback_deques, writeback_fed, writeback_items
from .errors import ConversionError
from .function_spec import TraceTarget
from .function_spec import is_spec as _is_spec
from .operators import mutation, returned_keys, tensor_flags
from .operators.aliases import call_arguments
from .operators.branch_callables import refuse_kept
from .operators.calls import call
from .operators.failed_trace import restore_graph_values
from .operators.made_sets import plain, refuse_undecided
from .operators.mutation import StateChangeError
from .operators.str_arrays import str_output
from .operators.trace_state import tracing
from .operators.traced_keys import refuse_traced_keys
from .operators.unbound import read as read_unbound
from .pyct import loader
from .transpile import deep_recursion

# A converted call goes through a few Python frames for each of the user's (the operators an
# `if`, a call or a loop runs in), so a trace may recurse this many times deeper than Python
# lets the user's own code: what runs eagerly traces (a recursive function as deep as eager's
# limit, an `elif` chain of hundreds). No more: a runaway recursion still ends as eager's does.
_TRACE_FRAMES_PER_USER_FRAME = 4


@dataclasses.dataclass(frozen=True)
class Trace:
    """One traced program and what running it needs: the feed Variables (the call's tensors,
    then the Python numbers kept as program state), the returned leaves (Variables where the
    program computes them) and their `pytree` structure, the guards a call must pass to reuse
    it (`guards.py`), and the Python state it changes (`side_effects.Effects`)."""

    target: TraceTarget
    program: Any
    feeds: list
    leaves: list
    tree: Any
    guards: tuple
    effects: side_effects.Effects
    owned: tuple = ()  # the caller's objects the result holds (`owned_results`)


def trace(target: TraceTarget, args, kwargs, with_hooks: bool = False,
          state: bool = True) -> Trace:
    """Trace a call of `target` into a new program.
    With `with_hooks`, the forward pre- and post-hooks of the target's Layer run around it
    (what `layer(x)` does), so they are part of the program. A trace that changed Python
    numbers reachable from the call is traced again with them as program state
    (`side_effects.py`); if that trace fails, they are guarded and replayed instead."""
    try:
        with deep_recursion(_TRACE_FRAMES_PER_USER_FRAME * sys.getrecursionlimit()):
            return _trace(target, args, kwargs, with_hooks, state)
    finally:
        errors.forget_last_walk()  # (the frames of the traced call are done)


def _trace(target, args, kwargs, with_hooks, state):
    if not state:  # a program to save: Python values stay constants
        return _trace_once(target, args, kwargs, with_hooks, (), state=False)
    try:
        return _trace_once(target, args, kwargs, with_hooks, ())
    except side_effects.Promote as p:
        promote, computed = p.slots, p.computed
    # fed as program state: every changed number; else only those computed from tensors (a
    # Python counter deciding a Python `if` around `opt.step()` stays a guarded Python
    # value beside a `meter.sum += loss.item()`); else none (guarded, replayed)
    counters = [s for s in promote if s not in computed]
    attempts = [(promote, ())] + ([(computed, counters)] if computed and counters else [])
    for fed, fixed in attempts:
        try:
            return _trace_fed(target, args, kwargs, with_hooks, fed, fixed)
        except side_effects.Promote:
            raise AssertionError("d2s bug: numbers kept changing between traces") from None
        except Exception:  # noqa: BLE001, S112  (the next attempt keeps more numbers Python)
            continue
    return _trace_once(target, args, kwargs, with_hooks, (), fixed=promote)


def _trace_fed(target, args, kwargs, with_hooks, fed, fixed):
    """`_trace_once` with the numbers `fed` as program state; a trace that then changes
    more numbers (`acc.updates += 1` under an `if` that the fed `acc.micro` now decides)
    is traced again with those fed too."""
    for _ in range(3):
        try:
            return _trace_once(target, args, kwargs, with_hooks, fed, fixed=fixed)
        except side_effects.Promote as p:
            known = {s.ident() for s in fed}
            more = [s for s in p.slots if s.ident() not in known]
            if not more:
                raise
            fed = list(fed) + more
    return _trace_once(target, args, kwargs, with_hooks, fed, fixed=fixed)


def _trace_once(target, args, kwargs, with_hooks, promote, fixed=(), state=True) -> Trace:
    logging_utils.log(1, f"tracing {target.qualname} (program {target.number})")
    program = rt.static.Program()
    program.from_eager_code = True  # (APIs whose static meaning differs act as eagerly)
    with rt.static.program_guard(program):
        fed = _Feeder(target.spec, program)
        names = target.spec.arg_names
        new_args = [a if target.spec.only_appended(i, a) else fed.feed(
            a, names[i] if i < len(names) else f"arg{i}") for i, a in enumerate(args)]
        new_kwargs = {k: fed.feed(kwargs[k], k) for k in sorted(kwargs)}
        fn = _with_hooks(target.instance, target.converted) if with_hooks else target.converted
        numbers = side_effects.feed_numbers(promote, program)
        fed.feeds += [n.feed for n in numbers]
        out, effects, reads, log = _run(target, fn, new_args, new_kwargs, fed, numbers,
                                        fixed, state)
        effects.bound = side_effects.bound_arguments(args, effects, out, kwargs)
        leaves, tree, value = _returned(target, program, out, args, kwargs, state, effects.made)
        owned = owned_results.find(value, tree, log, fed.copies, effects.made_anew()) \
            if state else ()
        effects.arg_writes = _written_arguments(program, fed.feeds, fed.names)
    found = writeback_fed.fed_guards(_as_at_call_start(  # (not state fed in)
        [g for g in reads.guards if not _is_variable(g[2])], log),
        effects.rebound + effects.renewed)
    frozen = tensor_flags.frozen_guard(program, {id(s.obj) for s, _ in effects.writes})
    state = writeback_items.window_guards(tuple(effects.guards), [  # (lists of fed tensors)
        w for w in effects.renewed if isinstance(w, writeback_items.Window)])
    return Trace(target, program, fed.feeds, leaves, tree,
                 found + state + tuple(side_effects.number_guards(numbers)) +
                 frozen + _setting_guards(program), effects, owned)


def _setting_guards(program) -> tuple:
    """The settings library code read while building the program (`GradScaler._enable`,
    `runtime.core.setting_read`), guarded by value: a change traces anew, as eager code
    reads them anew."""
    return tuple(guards.value_guard(("attr", obj, name, f"{type(obj).__name__}.{name}"), value)
                 for obj, name, value in settings_read(program))


class _Feeder:
    """Feeds a call's arguments to the program being traced: each tensor, array or InputSpec
    becomes a feed Variable (named after its parameter or InputSpec), containers are rebuilt
    around what was fed in them, other values pass as they are."""

    def __init__(self, spec, program):
        self.spec, self.program = spec, program
        self.feeds: list = []
        self.names: list = []  # each fed tensor's name (an in-place write retargets it)
        self.copies: list = []  # lists and dicts rebuilt: their changes go to the user's
        self._same: dict = {}  # id -> Variable: a Tensor passed as several arguments, fed once

    def feed(self, x, hint: str):
        if _is_tensor(x) and id(x) in self._same:
            return self._same[id(x)]
        if _is_tensor(x) or _is_spec(x) or isinstance(x, np.ndarray):
            return self._feed_tensor(x, hint)
        if pytree.is_container(x):
            items, how = pytree.children(x)
            keys = how[2] if isinstance(x, dict) or how[0] == "dataclass" else range(
                len(items))
            fed = [self.feed(t, f"{hint}_{k}") for k, t in zip(keys, items)]
            if all(a is b for a, b in zip(fed, items)):
                return x  # nothing fed inside: the user's own object
            copy = pytree.rebuild(how, fed)
            if type(x) in (list, dict) or how[0] == "dataclass":  # its changes are written
                self.copies.append(writeback.Copy(copy, x))  # to the user's one
            return copy
        return x

    def _feed_tensor(self, x, hint: str):
        i = len(self.names)
        spec = self.spec.spec_for(i)
        shape = spec.shape if spec is not None else x.shape
        dtype = spec.dtype if spec is not None and isinstance(x, np.ndarray) else x.dtype
        if spec is not None and spec.name:
            hint = spec.name
        elif _is_spec(x) and x.name:  # an InputSpec given for this call names it
            hint = x.name
        name = hint if hint not in self.program.names else f"{hint}_{i}"
        v = rt.static.data(name, list(shape), dtype)
        v.stop_gradient = getattr(x, "stop_gradient", True)
        v.__dict__["fed_stop"] = v._stop_gradient  # (`argument_flags`: a change of it)
        self.feeds.append(v)
        self.names.append(name)
        if _is_tensor(x):
            self._same[id(x)] = v
        return v


def _run(target, fn, args, kwargs, fed, numbers, fixed, state) -> tuple:
    """Run the converted function on the fed arguments, recording its guards; returns (what
    it returned, the Python state it changed, the guard recording). The objects it changed
    hold what they held before (the first run writes the program's results there); a trace
    that fails leaves them as they were, or as the user's raise left them."""
    with guards.recording() as reads, call_arguments(args, kwargs), tracing() as traced:
        passed = guards.bind_arguments(target.function, args, kwargs, target.instance)
        guards.passed_in(passed)
        guards.record(target.function, target.reads, target.instance, passed)
        before = writeback.before(target, args, kwargs)
        flags = traced.watched = tensor_flags.snapshot([target.instance, *args,
                                                        *kwargs.values()])
        try:
            try:
                out = fn(*args, **kwargs)
            except RecursionError as e:
                raise _endless_recursion(e) or e
            finally:
                tensor_flags.note_unconverted(traced, flags)  # (set by code d2s leaves as is)
            # a returned name bound on some paths only (`operators.unbound`): read here, where
            # the raise it makes still sees what the call changed before it
            read_unbound(returned_keys.read_leaves(out))
            refuse_undecided(out)  # (a set whose items a tensor `if` decides)
            effects = side_effects.scan(before.log, numbers, fixed, target.effect_places,
                                        fed.copies) if state else side_effects.Effects()
            if state:
                side_effects.flag_writes(effects, traced, before.log)  # (`p.stop_gradient =`)
            effects.raises = traced.raises  # (what a run that raises writes back)
            rebound = [] if state else None  # (a program to save keeps tensors in place)
            kept: dict = {}
            renewed = [] if state else None
            out = writeback.capture(target, args, kwargs, out, before, numbers, fed.copies,
                                    rebound, kept, renewed)
            effects.rebound, effects.renewed = rebound or [], renewed or []
            for noted in traced.raises.values():  # (a raise writes those in place too)
                noted.keep(kept)
            # Until the first run writes the program's results there (and replays the
            # Python changes), the objects hold what they held before the call: a first
            # run that fails leaves no Variable in them.
            before.log.restore()
            side_effects.unfeed(numbers)  # the first run feeds them and writes them back
        except BaseException as e:
            if errors.raised_by_user_code(e):  # as eagerly: Python changes made before
                restore_graph_values(before.log)  # the user's raise stand
            else:
                before.log.restore()  # the objects as they were before this trace
                writeback_deques.restore(before.deques)
                tensor_flags.restore(traced)  # (and the flags it set on tensors)
            side_effects.unfeed(numbers)
            raise
    return out, effects, reads, before.log


def _as_at_call_start(found: list, log) -> tuple:
    """Read guards of attributes the trace changed before reading them (`model.eval()`, then
    `self.drop.training` read, then `model.train()`) check the value the call starts from,
    which decides the trace, not the one the read saw (that one would never hold again at a
    call's start: a new trace every call)."""
    out = []
    for g in found:
        place = g[0]
        if place[0] == "attr" and g[1] == "eq" and len(place) > 3:
            old = side_effects.old_value(log, mutation.Slot(place[1], "attr", place[2],
                                                            place[3]))
            if old is not mutation.MISSING and not (type(old) is g[2][0] and old == g[2][1]):
                g = guards.value_guard(place, old)
        out.append(g)
    return tuple(out)


def _returned(target, program, out, args, kwargs, state, made: dict) -> tuple:
    """(leaves, tree, the value flattened) of what the traced function returned, each tensor
    leaf its Variable, each set it made a plain set (the one written back where the call
    stored it: `made`); refuses what a program cannot return for every call."""
    out = returned_keys.mark(out, target.function)  # (keys a tensor decides: with their flags)
    refuse_traced_keys(out, target.function)  # (`{int(t): v}`: see `traced_keys`)
    value = plain(out, made)
    leaves, tree = pytree.flatten(value)  # (also dict keys: `{frozenset(s): n}`)
    leaves = [plain(x, made) for x in leaves]
    _refuse_objects_holding_variables(target, leaves)
    _refuse_parameters_made_per_call(target, program, args, kwargs)
    b = current_builder()
    for x in leaves:
        refuse_kept(x, "returned by the converted function")
    leaves = [b.variable_of(x) if _is_tensor(x) else str_output(x) for x in leaves]
    for v in leaves:
        _refuse_unknown_number_type(v)
    if state:
        leaves = [_packed(x) for x in leaves]
    return leaves, tree, value


def _refuse_unknown_number_type(v) -> None:
    """A returned list of Python numbers holding ints beside floats (the program keeps them as
    floats), or a number read from one: which are ints, as eager code has them, only the run
    decides, so the call could not give eager's types."""
    if _is_variable(v) and getattr(v, "number_type_unknown", False):
        raise ConversionError(
            "the function returns an item of a list of Python numbers that holds ints beside "
            "floats and that a loop or if whose condition is a tensor grows (or a number "
            "computed from one): the program keeps the items as floats, so whether eager code "
            "has an int there only the run decides. Append floats only (`float(v)`), or keep "
            "the ints in a separate list.")
    if _is_variable(v) and v.is_array and getattr(v, "mixed_numbers", False):
        raise ConversionError(
            "the function returns a list of Python numbers that holds ints beside floats and "
            "that a loop or if whose condition is a tensor grows: the program keeps the items "
            "as floats, so which of them are ints (as in eager code) only the run decides. "
            "Append floats only (`float(v)`), or keep the ints in a separate list.")


def _packed(v):
    """A returned tensor array of floats with a known element shape (a list grown by a tensor
    condition): returned as its elements stacked (`array_pack`), which `running.Entry`
    un-stacks with eager ops, so the list's items keep their gradient path as eager's do."""
    if not (_is_variable(v) and v.is_array and v.dtype.is_floating):
        return v
    items = holds_tensor_items(v)  # (Python numbers and tensors: `[value, is_tensor]` pairs)
    if holds_python_numbers(v) and not items or getattr(v, "row_lists", False):
        return v  # (a list of Python numbers, or `x.tolist()`'s rows: `running.Entry`)
    shape = v._static_shape
    if shape is None or any(d < 0 for d in shape):
        return v  # (elements of different shapes: returned without a gradient path)
    packed = array_pack(v, items=items)
    packed.returned_as_list = True
    packed.tensor_items = items  # (`running.Entry` gives the tensor, or the Python number)
    packed._d2s_tuple = getattr(v, "_d2s_tuple", False)  # (`tuple(lst)`: a tuple returned)
    if v.item_stops is not None:  # (each item's stop_gradient: `running.Entry`)
        packed.stop_when = array_pack(v.item_stops)
    return packed


_PLAIN = (int, float, complex, str, bytes, bool, type(None), type, np.ndarray, np.generic)


def _refuse_objects_holding_variables(target, leaves) -> None:
    """A returned object that is not a container the program can rebuild (a list, tuple,
    dict, namedtuple or dataclass) but holds a tensor the trace computed (`return Box(x * 3)`)
    would give every call the trace's Variable: refused, saying what to return instead."""
    for leaf in leaves:
        if isinstance(leaf, _PLAIN) or _is_tensor(leaf) or _is_variable(leaf):
            continue
        seen, stack = set(), [(leaf, "")]
        while stack and len(seen) < 2000:
            obj, path = stack.pop()
            if id(obj) in seen or isinstance(obj, _PLAIN + (types.ModuleType,)):
                continue
            seen.add(id(obj))
            if _is_variable(obj):
                raise StateChangeError(
                    f"{target.qualname} returns a {type(leaf).__name__} object holding a "
                    f"tensor it computed (in {path or 'it'}); a converted function returns "
                    "tensors in lists, tuples, dicts, namedtuples and dataclasses, rebuilt on "
                    f"every call. Make {type(leaf).__name__} a dataclass "
                    "(@dataclasses.dataclass) or a NamedTuple, or return the tensors.")
            if _is_tensor(obj) or callable(obj) and not hasattr(obj, "__dict__"):
                continue
            if isinstance(obj, dict):
                stack += [(v, f"{path}[{k!r}]") for k, v in obj.items()]
            elif isinstance(obj, (list, tuple, set, frozenset)):
                stack += [(v, f"{path}[{i}]") for i, v in enumerate(obj)]
            elif isinstance(getattr(obj, "__dict__", None), dict):
                stack += [(v, f"{path}.{k}") for k, v in vars(obj).items()]


def _refuse_parameters_made_per_call(target, program, args, kwargs) -> None:
    """A Parameter the traced code made (a Layer created inside the function) that the
    program uses and no Layer of the call keeps (not the instance's, not an argument's, so
    not a Layer built on the first call and kept on `self`): eager code makes new ones, with
    new values, on every call; the program would reuse the trace's and accumulate their
    gradients. Refused at the line that made it."""
    made = program.made_parameters
    if not made:
        return
    from runtime.nn import Layer  # (runtime.nn is loaded on first use)
    kept = set()
    for owner in (target.instance, *args, *kwargs.values()):
        if isinstance(owner, Layer):
            kept.update(p.name for p in owner.parameters())
    for name, origin in made.items():
        t = program.tensors.get(name)
        if t is None or t.stop_gradient or name in kept:
            continue
        raise ConversionError(
            f"{target.qualname} makes the parameter {name} (shape {list(t.shape)}) on every "
            f"call:\n{format_origin(origin)}\nA converted function is traced once, so later "
            "calls would reuse the first call's parameters (and add up their gradients) where "
            "eager code makes new ones each call. Create the Layer once, outside the function "
            "(in __init__, or pass it in), and call it here.",
            None)


def _written_arguments(program, feeds, fed_names) -> list:
    """`(feed index, new value)` for each tensor argument the function wrote in place
    (`x[0] = 0`, `x[mask] = v`): its Variable now names the written value, and `feeds[i]` is
    set back to the fed one. The caller's Tensor takes the new value after each call, as
    eager code would have written it (`running.Entry`)."""
    table = program.global_block().vars
    out = []
    for i, name in enumerate(fed_names):
        v = feeds[i]
        if v.name == name:
            continue
        if getattr(v.block, "idx", 0) != 0:
            raise StateChangeError(
                f"the argument {name!r} is written in place inside an if or loop whose "
                "condition is a tensor in a way d2s could not follow; write to a copy "
                "(y = x.clone()) and return it")
        out.append((i, v))
        feeds[i] = table[name]
    return out


def _endless_recursion(e: RecursionError):
    """A ConversionError for a recursion that never ends while tracing because its depth
    depends on a tensor (a tensor `if` traces both branches, the recursive one too), or None
    when the recursion is plain Python."""
    calls: dict = {}  # (file, line) of user code -> [the origins of its frames]
    under_graph_branch = False
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "ifelse" and code.co_filename.endswith("control_flow.py"):
            under_graph_branch = under_graph_branch or _graph_pred(tb.tb_frame)
        src = loader.lookup(code.co_filename, tb.tb_lineno)
        if src is not None:
            calls.setdefault((src.filename, src.lineno), []).append(src)
        tb = tb.tb_next
    repeated = [o for o in calls.values() if len(o) >= 20]
    if not repeated or not under_graph_branch:
        return None
    src = max(repeated, key=len)[-1]
    return ConversionError(
        f"d2s cannot convert {src.function_name}: it calls itself in a branch of a tensor "
        f"condition (line {src.lineno}: {src.source_line.strip()}), so the depth of the "
        "recursion depends on a tensor. A tensor `if` traces both of its branches, the "
        "recursive one too, and the trace never ends. Make the depth a Python value (e.g. an "
        "int argument counting down), or write the recursion as a `while` loop.", src)


def _graph_pred(frame) -> bool:
    pred = frame.f_locals.get("pred")
    return _is_variable(pred)


def _with_hooks(layer, forward):
    """`forward` with `layer`'s own forward hooks around it, each converted like user code."""
    def run_hook(kind, hook, *args):
        try:
            return call(hook)(layer, *args)
        except ConversionError:
            raise
        except Exception as e:
            name = getattr(hook, "__qualname__", repr(hook))
            raise ConversionError(
                f"the forward {kind}-hook {name} of {type(layer).__name__} cannot be part of "
                f"the saved program ({type(e).__name__}: {e}). A saved model runs the hooks "
                "registered on the Layer when it is saved; make the hook use tensor ops only, "
                "or remove it (handle.remove()) before saving.") from e

    def run(*inputs, **kwargs):
        for hook in list(layer._forward_pre_hooks.values()):
            result = run_hook("pre", hook, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        outputs = forward(*inputs, **kwargs)
        for hook in list(layer._forward_post_hooks.values()):
            result = run_hook("post", hook, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    return run
