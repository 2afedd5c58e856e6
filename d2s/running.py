"""Running a traced program: one `Entry` per input signature holds the compiled program,
feeds the call's tensors (and the Python numbers kept as program state), writes back the state
the call changed, and when gradients are wanted runs the forward part of a training program
and records the call as ONE autograd op whose backward runs the backward part on the values
the forward part saved (see `program_cache.py`).
"""
from __future__ import annotations

import contextlib
import gc

import numpy as np

import runtime as rt
from runtime import backend, pytree
from runtime.autograd import FREED, Node, record
from runtime.core import array_of, mode_state
from runtime.ops import array_number_kinds as kinds
from runtime.ops.array_number_kinds import STRINGS, holds_number_kinds, holds_strs, number_of_pair
from runtime.ops.arrays import holds_python_numbers
from runtime.program.executor import rewrite_error, with_cause
from runtime.program.freed_branches import follow_branch_frees
from runtime.program.freed_graph import freed_conditions, graph_ops
from runtime.program.freed_loops import follow_loop_frees
from runtime.program.passes import fuse_batch_norm_relu, fuse_batch_norm_relu_in_place
from runtime.program.reach_paths import gradient_sites
from runtime.program.reach_values import block_ran, top_level
from runtime.program.reached import Branch, Ran
from runtime.program.split import split_program
from runtime.program.variable import Variable
from runtime.tensor import wrap

from . import guards, owned_results, writeback, writeback_order
from .output_kinds import bool_flag, choose_dtype, dtype_outputs, float_flag, number_of_kind
from .argument_flags import check_writable, flagged_arguments, set_flags
from .operators import returned_keys, state_at_raise
from .running_backward import Backward, Part, Training
from .tracing import Trace
from .writeback_fed import fed_params, recorded_sources

_RUN_OP = type("StaticProgramOp", (), {"name": "run_program", "grad": None, "nondiff": False})()
_PASS_OP = type("PassOp", (), {"name": "assign", "nondiff": False,
                               "grad": staticmethod(lambda ins, outs, grads, attrs: grads)})()


class ConcreteProgram:
    """One traced program: `.main_program`, `.inputs` (feed Variables), `.outputs` (fetched
    Variables), `.parameters` (captured trainable tensors)."""

    def __init__(self, main_program, inputs, outputs, parameters):
        self.main_program = main_program
        self.inputs = inputs
        self.outputs = outputs
        self.parameters = parameters

    def __repr__(self):
        return (f"<ConcreteProgram inputs={[v.name for v in self.inputs]} "
                f"outputs={[v.name for v in self.outputs]} ops={self.main_program.num_ops()}>")


_MANY_YOUNG = 50_000  # (objects; a program of ~5,000 ops leaves that many)


@contextlib.contextmanager
def gc_paused():
    """Cyclic GC off for a while: tracing and compiling allocate many short-lived objects, few
    in cycles, and GC passes over them cost a good part of a first call and would free little.
    Many new objects left (a huge program, alive with its cache entry) go to the oldest
    generation unscanned (`_to_oldest`): collecting them frees ~nothing (4 of 159,000)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
            young = gc.get_count()[0]
            if young > _MANY_YOUNG:
                _to_oldest(young)


def _to_oldest(young: int) -> None:
    """The young and middle generations moved into the oldest, unscanned (`freeze`, `unfreeze`:
    list splices; what `unfreeze` moves does not hasten its next collection). Where the process
    froze objects itself, the middle generation is collected (the heap where that is next)."""
    if gc.get_freeze_count():
        gc.collect(2 if _full_is_next(young) else 1)
        return
    gc.freeze()
    gc.unfreeze()


def _full_is_next(young: int) -> bool:
    """Whether moving `young` more objects into the oldest generation makes CPython collect
    all of it within its next few collections of the middle generation (the objects moved
    there since its last collection are a quarter of those it kept: counted against all)."""
    return young * 4 > len(gc.get_objects(generation=2))


def _freed(out, why=None) -> None:
    """`out` as eager code leaves a result whose graph a backward() inside the call freed
    (`why` None), or computed (directly, or by ops `why[2]` after it) by an op of type `why[0]`
    whose input (of shape `why[1]`) the call then wrote in place: it requires a gradient, and
    a backward() through it raises eager's error ("already freed"; "modified in place", by eager's version check)."""
    if why is None:
        node = Node(_RUN_OP, (), {}, (out,))
        node.inputs = None
    else:  # (`behind`: ops after the reading one, which eager's first backward frees)
        op_type, shape, behind = why
        written = wrap(backend.XP.zeros([max(d, 0) for d in shape], out._data.dtype))
        read = wrap(out._data) if behind else out
        node = Node(type("Op", (), {"name": op_type})(), (written,), {}, (read,))
        written._version += 1  # (after the op used it)
        read._node, read._index, read.stop_gradient = node, 0, False
        if behind:
            node = Node(_PASS_OP, (read,), {}, (out,))
    out._node, out._index, out.stop_gradient = node, 0, False


def _freed_results(program, outs: list) -> tuple:
    """([(output, conditions)], predicates to fetch after `outs`) for the floating results
    with a gradient path through a graph freed by a backward() in the call: all of a whole
    step's (`loss`, `logits.clone()`), else those computed from what an `rt.grad` without
    retain_graph freed (`freed_graph.py`). A condition is (the output index of a top-level
    predicate, truth); no conditions: freed on every run."""
    diff = [k for k, v in enumerate(outs) if not v.is_array and not v.stop_gradient
            and v.dtype.is_floating]
    follow_branch_frees(program, lambda: RuntimeError(FREED))  # (a whole step's too)
    if getattr(program, "in_program_backward", False):
        return [(k, [(None, True, None)]) for k in diff], []
    preds: dict = {}
    freed = []
    names = [outs[k].name for k in diff]
    loops = follow_loop_frees(program, lambda: RuntimeError(FREED))
    for k, conds in zip(diff, freed_conditions(program, names, block_ran, loops),
                        strict=True):
        if conds is not None:
            freed.append((k, [(None if p is None else len(outs) + preds.setdefault(
                p, len(preds)), truth, why) for p, truth, why in conds]))
    return freed, [program.global_block().var(p) for p in preds]


class Entry:
    """One signature's program, compiled, plus its training form (built on first use)."""

    def __init__(self, trace: Trace):
        program, feeds, leaves, effects = trace.program, trace.feeds, trace.leaves, trace.effects
        self.name = trace.target.qualname  # (for errors)
        self.guards = trace.guards
        self.check = guards.compile_check(self.guards)
        self.effects = effects if effects.writes else None
        self.new_places = effects.new_places
        self.raises = effects.raises  # (a run-time raise op's key -> the state to write back)
        self.rebound = effects.rebound  # tensor places the program reads, fed before a run
        self.numbers = [(n.feed.name, n.slot, n.feed.dtype.name) for n in effects.numbers]
        self.tree = tree = trace.tree
        self.owned = trace.owned  # (the caller's objects the result holds: `owned_results`)
        self.present_keys = returned_keys.in_tree(tree)  # (dicts of keys a tensor decides)
        self.leaves = leaves
        self.out_index = [i for i, v in enumerate(leaves) if isinstance(v, Variable)]
        # sets the traced code made, returned: a new one per call, as each eager call makes
        made = {id(v) for k, v in effects.made.items() if id(v) != k and type(v) is set}
        self.copied_leaves = [i for i, v in enumerate(leaves) if id(v) in made]
        # arguments written in place: their new values are outputs too (with a gradient
        # path), which `run` writes into the caller's Tensors
        self.arg_writes = [i for i, _ in effects.arg_writes]
        self.arg_flags = flagged_arguments(feeds)  # (`x.stop_gradient = False` of an argument)
        outs = [leaves[i] for i in self.out_index] + [v for _, v in effects.arg_writes]
        # Python numbers whose type the run decides (`sum()` of a list of floats is the int
        # start when the list is empty; a bool on one path of a tensor `if`, an int on the
        # other): (output, output of its "is a float" flag, of its "is a bool" flag), a flag
        # None where the dtype decides
        flags = [(k, float_flag(outs[k]), bool_flag(outs[k]))
                 for k in range(len(self.out_index))]
        flags = [f for f in flags if f[1] is not None or f[2] is not None]
        extra = [x for _, *fs in flags for x in fs if x is not None]
        at = iter(range(len(outs), len(outs) + len(extra)))
        self.number_kinds = [(k, None if f is None else next(at), None if b is None else next(at))
                             for k, f, b in flags]
        outs = outs + extra
        # values that are a Python number on some runs and a tensor on others
        # (`operators/number_or_tensor.py`): (output, output of its flag, of the number)
        mixed = [k for k in range(len(self.out_index)) if outs[k].number_when is not None]
        self.number_or_tensor = [(k, len(outs) + 2 * j, len(outs) + 2 * j + 1)
                                 for j, k in enumerate(mixed)]
        outs = outs + [x for k in mixed for x in (outs[k].number_when, outs[k].number_value)]
        # values that are None on some runs (`operators/none_or_tensor.py`): (output, flag)
        nones = [k for k in range(len(self.out_index)) if outs[k].none_when is not None]
        self.none_or_tensor = [(k, len(outs) + j) for j, k in enumerate(nones)]
        outs = outs + [outs[k].none_when for k in nones]
        # values whose dtype a tensor `if` decides (`operators/branch_dtypes.py`): (output,
        # output of its flag, of the other dtype's value)
        self.dtype_switch, outs = dtype_outputs(outs, len(self.out_index))
        # results whose stop_gradient (of each item, for a list) the run decides
        # (`runtime/program/stop_flags.py`): (output, output of its flag)
        self.stop_flags = [(k, len(outs) + j) for j, k in enumerate(
            k for k in range(len(self.out_index)) if outs[k].stop_when is not None)]
        outs = outs + [outs[k].stop_when for k, _ in self.stop_flags]
        # results with a gradient path through a graph that a backward() in the call freed:
        # eager code leaves them requiring a gradient, and a backward() through them raises
        # (output, [(output of a predicate, truth)]: freed on the runs where one holds)
        self.freed_out, preds = _freed_results(program, outs)
        outs = outs + preds
        self.outs = outs
        self.out_stop = [v.stop_gradient for v in outs]
        # outputs that are tensor arrays come back as Python lists of Tensors (without a
        # gradient path); the others are recorded for autograd
        flags = {f for _, f in self.stop_flags} | set(range(len(outs) - len(preds), len(outs)))
        self.tensor_out = [k for k, v in enumerate(outs) if not v.is_array and k not in flags]
        self.has_diff = any(outs[k].dtype.is_floating for k in self.tensor_out) and not \
            getattr(program, "in_program_backward", False)  # a whole step: no grad path
        self.feed_names = [v.name for v in feeds[:len(feeds) - len(self.numbers)]]
        self.params = [t for t in program.tensors.values() if not t.stop_gradient]
        # results needing a gradient through leaves the function makes: recorded (eager's flag)
        self.made_leaves = not self.params and all(v.stop_gradient for v in feeds) and any(
            not outs[k].stop_gradient for k in self.tensor_out if outs[k].dtype.is_floating)
        self.concrete = ConcreteProgram(program, feeds, outs[:len(self.out_index)],
                                        self.params)
        self.executor = rt.static.Executor()
        # (a big program's first run interpreted, compiled from its second: `interpreter.py`)
        fetch = tuple(v.name for v in outs)  # (BatchNorm + ReLU as one op where it may)
        self.compiled = self.executor.compiled(fuse_batch_norm_relu(program, fetch), fetch,
                                               interpret_first=True)
        self.fn = self.compiled.fn
        # lists grown by a tensor condition, returned stacked (`tracing._packed`)
        self.as_lists = [k for k, v in enumerate(outs) if getattr(v, "returned_as_list", False)]
        # outputs standing for Python numbers (`item()`, `int(t)`, `bool(t)`, arithmetic on
        # them): the call gives Python numbers there, as eager code does
        self.python_out = [k for k, v in enumerate(outs[:len(self.out_index)]) if
                           v.python_scalar and not v.is_array and (not getattr(
                               v, "mixed_number", False) or float_flag(v) is not None
                               or bool_flag(v) is not None)]
        # a graph value returned or written back in several places (`self.last = loss`,
        # `return loss`): one object in all of them, as eager code has
        first: dict = {}
        self.repeated = [(k, j) for k, j in ((k, first.setdefault(id(v), k)) for k, v in
                                             enumerate(outs[:len(self.out_index)])) if k != j]
        # results of `.numpy()`: the call gives NumPy arrays there, as eager code does
        self.array_out = [(k, v.numpy_scalar) for k, v in enumerate(outs[:len(
            self.out_index)]) if v.numpy_array and not v.is_array]
        # arrays standing for lists of Python numbers (or `x.tolist()`'s rows: lists of them)
        self.number_lists = [k for k, v in enumerate(outs[:len(self.out_index)]) if v.is_array
                             and (getattr(v, "row_lists", False) or holds_python_numbers(v) and
                             not holds_number_kinds(v) and not kinds.holds_tensor_items(v))]
        self.tensor_item_lists = [k for k, v in enumerate(outs[:len(self.out_index)]) if
                                  v.is_array and kinds.holds_tensor_items(v) or getattr(
                                      v, "tensor_items", False)]  # (`tensor_items`)
        self.str_lists = {k for k in self.number_lists if holds_strs(outs[k])}
        self.joined = [(k, outs[k].joined_by) for k in self.str_lists  # (`sep.join(names)`)
                       if getattr(outs[k], "joined_by", None) is not None]
        # items of such lists (`str_arrays.StrItem`): the call gives the str
        self.str_out = [k for k, v in enumerate(outs[:len(self.out_index)]) if
                        getattr(v, "str_item", False)]
        # ... of Python numbers of several types, each a `[value, kind]` pair
        self.pair_lists = [k for k, v in enumerate(outs[:len(self.out_index)]) if
                           v.is_array and holds_number_kinds(v)]
        # arrays that converted code made tuples (`tuple(lst)`, a `zip(*pairs)` column)
        self.tuple_out = [k for k, v in enumerate(outs[:len(self.out_index)]) if
                          getattr(v, "_d2s_tuple", False)]
        # integer/bool outputs the traced code marked stop_gradient=False (`rt.to_tensor(v,
        # dtype="int64", stop_gradient=False)`): no gradient flows, they keep the flag as eager's
        self.flagged_out = [k for k, v in enumerate(outs) if not v.stop_gradient and not (
            v.is_array or v.dtype.is_floating or v.python_scalar)]
        # the function returns exactly one tensor: its result is the call's result
        self.single = (tree is pytree.LEAF and self.out_index == [0] and self.tensor_out == [0]
                       and self.effects is None and not self.numbers and not self.arg_writes
                       and not self.as_lists and not self.python_out and not self.flagged_out
                       and not self.freed_out and not self.array_out
                       and not self.number_lists and not self.pair_lists and not self.tuple_out
                       and not self.tensor_item_lists and not self.str_out and not self.number_kinds
                       and not self.number_or_tensor and not self.none_or_tensor
                       and not self.dtype_switch
                       and not self.arg_flags
                       and len(outs) == 1 + len(self.stop_flags))
        # (a single result's run-decided flag follows it: read by a training call only)
        self._training = None
        self._state, self._wrap = mode_state(), wrap
        self._record = record
        self._float_out = self.has_diff  # (checked once, not per call)
        self._params = tuple(self.params)
        self._fed = fed_params(self._params, self.rebound)  # (their tensors' graph: each call's)
        # recorded outputs the program computes without a gradient path (detached after)
        self._detached = [i for i, k in enumerate(self.tensor_out) if self.out_stop[k]]
        # feeds and captured tensors the program never reads (a `self.h` it only writes):
        # recorded without their gradient path, so a backward never walks into the graph of
        # an old value (one an eager call's backward freed)
        self._unread = _unread(program, self.feed_names + [
            name for name, t in program.tensors.items() if not t.stop_gradient], outs)
        self.fast = None  # the call path of this signature, once it is called again (fast_call)
        self.slow_calls = 0

    def run(self, inputs):
        """Run the program on the call's tensors (in feed order, as `ProgramCache.find` gives
        them)."""
        feed = dict(zip(self.feed_names, map(array_of, inputs)))
        for name, slot, dtype in self.numbers:  # Python numbers kept as program state
            feed[name] = np.asarray(slot.get(), dtype)
        for place in self.rebound:
            place.feed()
        set_flags(inputs, self.arg_flags, False)  # (before the run: it records their path)
        train = self._state.grad_enabled and self.has_diff and (self.params or any(
            not t.stop_gradient for t in inputs) or self.made_leaves)
        if not train and self.single:  # the common inference call: one tensor out
            try:
                return self._wrap(self.fn(feed)[0])
            except Exception as e:
                raise with_cause(self.raised(e, self.compiled, self.concrete.main_program), e)
        if self.arg_writes:  # the caller's Tensors written in place after the run; the run
            # reads (and autograd records) their values from before, as eager setitem does
            targets = check_writable(inputs, self.arg_writes, self.feed_names, self.name)
            inputs = list(inputs)
            for k in self.arg_writes:
                inputs[k] = inputs[k]._shallow_copy()
        if train:
            training = self._training or self._build_training()
            compiled, program = training.forward, training.split.forward
        else:
            training = None
            compiled, program = self.compiled, self.concrete.main_program
        try:
            arrays = compiled.fn(feed)
        except Exception as e:
            raise with_cause(self.raised(e, compiled, program), e)
        out = self.finish(arrays, inputs, training, targets if self.arg_writes else ())
        set_flags(inputs, self.arg_flags, True)
        return out

    def run_training(self, inputs, arrays):
        """A call that records its gradient (what `run` does when it trains), given the
        checked arrays of the feeds (the tensors', then the numbers') in feed order (and the
        `rebound` places fed: the fast call path, its one caller, feeds them)."""
        training = self._training or self._build_training()
        order = training.order
        try:
            out = training.forward.body(*(arrays if order is None else
                                          [arrays[i] for i in order]))
        except Exception as e:
            raise with_cause(self.raised(e, training.forward, training.split.forward), e)
        return self.finish(out, inputs, training)

    def raised(self, e: Exception, compiled, program) -> Exception:
        """The error to raise for a run of `compiled` (of `program`) that raised `e`; a
        raise op's exception first writes back the state the call had changed where it
        raised, as eager code leaves it (`operators/state_at_raise.py`)."""
        if self.raises:
            state_at_raise.apply(e, self.raises)
        return rewrite_error(e, compiled, program)

    def finish(self, arrays, inputs, training, targets=()):
        """The call's result from the program's fetched arrays: Tensors (recorded as one
        autograd op when `training` is given), put in the returned structure, and the state
        the call changed written back."""
        wrap = self._wrap
        if self.single:  # one tensor out (`finish` of a training call, or a slow call)
            out = wrap(arrays[0])
            if training is not None:
                n = len(self.outs)
                self._record(_RUN_OP, recorded_sources(inputs, self._params, self._unread, self._fed), {},
                             (out,),
                             backward_fn=Backward(training, arrays[n:]))
                if self._detached or (n > 1 and arrays[1]):
                    out.stop_gradient = True
                    out._node = None
            return out
        n = len(self.outs)
        outs = [wrap(a) if type(a) is not list else [wrap(x) for x in a]
                for a in arrays[:n]]
        recorded = outs if len(self.tensor_out) == n else [outs[k] for k in self.tensor_out]
        if training is not None and self._float_out:
            self._record(_RUN_OP, recorded_sources(inputs, self._params, self._unread, self._fed), {},
                         tuple(recorded),
                         backward_fn=Backward(training, arrays[n:]))
            for i in self._detached:  # a value the program computes without a gradient path
                recorded[i].stop_gradient = True
                recorded[i]._node = None
        for k in self.as_lists:  # un-stacked by eager ops: each item keeps its gradient path
            outs[k] = list(outs[k].unbind(0)) if outs[k]._node is not None and len(
                arrays[k]) else [wrap(a) for a in arrays[k]]
        for k, flag in self.stop_flags:  # no gradient path on this run: cut, as eager's
            items = zip(outs[k], arrays[flag], strict=True) if type(outs[k]) is list else (
                (outs[k], arrays[flag]),)
            for item, cut in items:
                if cut:
                    item.stop_gradient = True
                    item._node = None
        for k in self.flagged_out:
            outs[k].stop_gradient = False
        for k, conds in self.freed_out:
            why = next((why for i, truth, why in conds
                        if i is None or bool(arrays[i]) is truth), False)
            if why is not False and not any(  # (a result cut on this run has no graph)
                    j == k and bool(arrays[flag]) for j, flag in self.stop_flags):
                _freed(outs[k], why)
        self._python_values(outs, arrays)
        for k, j in self.repeated:
            outs[k] = outs[j]
        for t, o in zip(targets, outs[len(self.out_index):]):
            t._inplace_update(o)  # the caller's Tensor, as eager code writes it
        leaves = list(self.leaves)
        for i, o in zip(self.out_index, outs):
            leaves[i] = o
        fresh: dict = {}  # (one new set per set the trace made: stored and returned alike)
        for i in self.copied_leaves:
            leaves[i] = fresh.setdefault(id(leaves[i]), leaves[i].copy())
        result = owned_results.unflatten(self.tree, leaves, self.owned, fresh)  # (`r is m`)
        result = writeback.apply(written := returned_keys.restore(result) if self.present_keys
                                 else result)
        if self.effects is not None:
            self.effects.replay(fresh)  # Python values the traced code set, set again
        writeback_order.settle(written)  # (the caller's dicts: keys in this run's order)
        return result

    def _python_values(self, outs: list, arrays) -> None:
        """The outputs that stand for Python values (numbers, strs, lists of them, NumPy
        arrays, tuples) made those values, in place in `outs`."""
        for k in self.python_out:
            outs[k] = arrays[k].item()  # (int, float or bool, by the dtype's kind)
        for k in self.number_lists:  # (`tolist()`: a number, or a row's nested lists)
            outs[k] = [a.tolist() for a in arrays[k]] if k not in self.str_lists else [
                STRINGS[int(a)] for a in arrays[k]]  # (ids of strs: `str_arrays`)
        for k, sep in self.joined:
            outs[k] = sep.join(outs[k])
        for k in self.str_out:
            outs[k] = STRINGS[int(arrays[k])]
        for k in self.pair_lists:  # (each item's own Python type)
            outs[k] = [number_of_pair(a) for a in arrays[k]]
        for k in self.tensor_item_lists:  # (the tensor, or the Python number)
            outs[k] = [t[0] if a[1] == kinds.TENSOR_CODE else kinds.code_type(
                a[1], a.dtype)(a[0].item()) for t, a in zip(outs[k], arrays[k])]
        for k, is_float, is_bool in self.number_kinds:
            outs[k] = number_of_kind(outs[k], is_bool is not None and arrays[is_bool],
                                      None if is_float is None else arrays[is_float])
        for k, scalar in self.array_out:  # (a NumPy scalar where eager's is one)
            outs[k] = backend.to_numpy(arrays[k])[()] if scalar else backend.to_numpy(arrays[k])
        for k, flag, number in self.number_or_tensor:  # (eager's Python number here; else
            if arrays[flag]:  # the tensor, or the NumPy value a graph loop's trips made)
                outs[k] = arrays[number].item()
        for k, flag in self.none_or_tensor:  # (eager's None here)
            if arrays[flag]:
                outs[k] = None
        choose_dtype(self.dtype_switch, outs, arrays)  # (the run's dtype's value)
        for k in self.tuple_out:
            outs[k] = tuple(outs[k])

    def body_order(self, compiled):
        """Indices into the feed-ordered arrays (tensors, then numbers) of the arguments of
        `compiled.body`, or None when they are those arrays as they are."""
        names = self.feed_names + [name for name, _, _ in self.numbers]
        order = [names.index(n) for n in compiled.body_feeds]
        return None if order == list(range(len(names))) else order

    def _build_training(self) -> Training:
        """A copy of the program with the gradients of the outputs (seeded by fed
        `<out>@GRAD` values) with respect to the inputs and captured parameters, split into
        the forward part this call runs and the backward part `loss.backward()` runs."""
        split, grads, seeds, diff, wrt = self._gradient_split()
        slots = [i for i, g in enumerate(grads) if g is not None]
        # inputs and parameters read only under a tensor `if` or in a graph loop's body: a
        # call that reached none of their reads leaves them no gradient (`.grad` None)
        outs = tuple(v.name for v in self.outs)
        # (an input returned as it is, `return x, loss`, is reached on every run)
        conditional = [i for i in slots if wrt[i].name not in outs]
        preds, reach = _reach_flags(split, [wrt[i].name for i in conditional], conditional,
                                    list(diff))
        forward = self.executor.compiled(split.forward, outs + tuple(split.fetch) + tuple(preds))
        backward = Part(self.executor.compiled(split.backward,
                                                tuple(grads[i].name for i in slots)),
                         split.slots, list(range(len(split.slots))), [s.name for s in seeds],
                         list(diff.values()), slots)
        self._training = Training(forward, backward, split, list(diff), self.feed_names,
                                   self.body_order(forward), reach, self._partial_backward)
        self._training.entry = self  # (its gradients under create_graph: `running_grad2`)
        # the program's ops each recorded output is computed from: a backward() frees those
        self._training.out_ops = graph_ops(self.concrete.main_program,
                                           [self.outs[k].name for k in self.tensor_out])
        return self._training

    def _gradient_split(self, keep=None, needed=None):
        """The program's clone with the gradients of its floating outputs (of those named in
        `keep`; default all) fed as `<out>@GRAD`, split after the forward ops, giving a
        gradient to the inputs and parameters whose flag in `needed` is true (default: the
        parameters and the inputs fed with stop_gradient=False).
        Returns (split, gradients per input and parameter, seeds, {output name: its
        indices}, inputs)."""
        copy = self.concrete.main_program.clone()
        fuse_batch_norm_relu_in_place(copy, {v.name for v in self.outs})  # (native backward)
        g0 = copy.global_block()
        n = len(g0.ops)
        outs = [g0.var(v.name) for v in self.outs]
        with rt.static.program_guard(copy):
            # one seed per distinct floating output (a function may return a value twice;
            # indices among the recorded outputs: tensor arrays are not recorded)
            diff: dict = {}
            touts = [outs[k] for k in self.tensor_out]
            for i, v in enumerate(touts):  # (not one with no gradient path on any run:
                mine = self.outs[self.tensor_out[i]]  # `rt.grad`'s result, a detached value)
                if v.dtype.is_floating and (keep is None or v.name in keep) and not (
                        mine._stop_gradient and mine.stop_when is None and not mine.stop_varies):
                    diff.setdefault(v.name, []).append(i)
            seeds = [rt.static.data(f"{name}@GRAD", touts[ix[0]].shape, touts[ix[0]].dtype)
                     for name, ix in diff.items()]
            wrt = [g0.var(name) for name in self.feed_names] + [
                g0.var(copy.captured[id(p)]) for p in self.params]
            if needed is None:
                # an input fed with stop_gradient=True (part of the signature) gets no
                # gradient, as eagerly: differentiating it anyway would leave its backward
                # GEMMs in the program (a Transformer layer's input: three of its 16)
                needed = [k >= len(self.feed_names) or not v.stop_gradient
                          for k, v in enumerate(wrt)]
            asked = [v for k, v in enumerate(wrt) if needed[k]] if diff else []
            found = iter(rt.static.gradients([touts[ix[0]] for ix in diff.values()], asked,
                                             target_gradients=seeds) if asked else ())
            grads = [next(found) if needed[k] and asked else None for k in range(len(wrt))]
        return split_program(copy, n), grads, seeds, diff, wrt

    def _partial_backward(self, present: tuple, needed: tuple):
        """The backward part for a `backward()` that reached only the outputs `present`
        marks: the others get no gradient, as eagerly, rather than a zero seed whose product
        with an infinite local gradient (sqrt at 0, log at 0) would be NaN. It computes the
        gradients only of the inputs and parameters `needed` marks (those that require one:
        a model's input image usually does not, and its gradient through the first
        convolution is a convolution's work). None when it needs a saved value the forward
        run did not save under the same name."""
        t = self._training
        split, grads, seeds, diff, _ = self._gradient_split(
            {name for name, p in zip(t.out_names, present) if p}, needed)
        # keyed by the saved values' own names: the top-level names a split gives values of
        # branches (`saved0`, ...) depend on which values that split saves
        saved = {name: k for k, name in enumerate(t.split.saved)}
        if any(name not in saved for name in split.saved):
            return None
        slots = [i for i, g in enumerate(grads) if g is not None]
        return Part(self.executor.compiled(split.backward, tuple(grads[i].name for i in slots)),
                     split.slots, [saved[name] for name in split.saved],
                     [s.name for s in seeds], list(diff.values()), slots)


def _reach_flags(split, names: list, slots: list, outs: list) -> tuple:
    """(the top-level bool values the forward part fetches after its saved values, `reach`):
    `reach` holds `(gradient slot, sites)` for each of `names` (the inputs and parameters at
    `slots`) that reach the differentiated outputs `outs` along a gradient path only under
    conditions (`reach_paths.gradient_sites`: a read detached on the branch this run took
    does not count); a site is a list of
    `(index among the saved values then the fetched flags, truth)`, where truth None means "a
    loop's saved iterations, not empty" (`running_backward.holds`). The flags are top-level branch
    predicates, else made by `reach_values.top_level`: whether a branch nested in another
    was taken, whether some trip of a loop took a branch in its body, whether a loop's value
    still depends on it after trips that may detach it (the loop carries those)."""
    sites_of = gradient_sites(split.forward, names, outs)
    saved = {name: k for k, name in enumerate(split.saved)}
    n = len(split.saved)
    fetched: dict = {}  # top-level flag name -> its index among the fetched flags
    made: dict = {}

    def flag(c):
        if isinstance(c, Ran):
            return (saved[c.saves], None) if c.saves in saved else None  # (else: no condition)
        if isinstance(c, Branch) and c.pred in split.forward.global_block().vars:
            name, truth = c.pred, c.truth
        else:  # (a loop's trips, a branch nested in a branch: a flag the program makes)
            name, truth = top_level(split.forward, c, made).name, True
        return n + fetched.setdefault(name, len(fetched)), truth

    reach = [(i, [[f for f in map(flag, site) if f is not None] for site in sites_of[name]])
             for i, name in zip(slots, names, strict=True) if name in sites_of]
    return list(fetched), reach


def _unread(program, names: list, outs: list) -> frozenset:
    """Positions in `names` (the feeds, then the captured tensors with a gradient path) of
    values that the program only writes (`write_persistable`'s target) or never uses: no op
    of any block reads them, no block returns them, the program does not fetch them."""
    read = {v.name for v in outs}
    for block in program.blocks:
        read.update(r for r in block.results if r.__class__ is str)
        for op in block.ops:
            names_read = op.input_names()
            if op.type == "write_persistable":
                next(names_read, None)  # (its target: written, not read)
            read.update(names_read)
    return frozenset(k for k, name in enumerate(names) if name not in read)


