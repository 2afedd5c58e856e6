"""Programs traced from a StaticFunction, one per input signature, and running them.

`ProgramCache.lookup` builds the key of a call (see `static_function`), traces a new program
on a miss, and returns the `_Entry` that runs it. Running feeds the tensor arguments' arrays
to the compiled program. When gradients are wanted (grad mode on and an input or a captured
parameter needs a gradient), the call runs the forward part of a training program (the traced
program plus `rt.static.gradients`, split by `runtime.program.split`) and is recorded as ONE
autograd op whose backward runs the backward part on the values the forward part saved: the
forward runs once per step, so random ops and running statistics behave as in eager code, and
`loss.backward()` and `opt.step()` work exactly as after eager code. Parameters are captured
by the program as persistable variables that read the Layer's own tensors: both modes share
them.
"""
from __future__ import annotations

import collections
import contextlib
import gc
import threading

import numpy as np

from runtime import pytree

from . import guards, side_effects, writeback
from .function_spec import is_spec as _is_spec
from .function_spec import is_tensor as _is_tensor

_RUN_OP = type("StaticProgramOp", (), {"name": "run_program", "grad": None, "nondiff": False})()


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


class ProgramCache:
    """Signature -> traced program for one StaticFunction; `len()` is the number of programs.

    At most `max_size` programs are kept (least recently used first out; the default is
    `DEFAULT_SIZE`, settable per function: `f.program_cache.max_size = 8`). The first call of
    a signature traces under a lock: other threads making the same call wait for that program
    and reuse it. A trace that fails caches nothing.
    """

    DEFAULT_SIZE = 64

    def __init__(self, max_size: int | None = None):
        # key -> [entries]: one per set of guard values (`d2s/guards.py`), newest first
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self.max_size = max_size if max_size is not None else self.DEFAULT_SIZE
        self.traces = 0  # programs traced so far (evicted ones included)
        self.last = None
        self._last_key = None
        self._count = 0
        self._lock = threading.RLock()
        self.effect_places: dict = {}  # places (Python values) traces changed: side_effects

    def __len__(self):
        return self._count

    def __iter__(self):
        return iter(list(self._entries))

    def find(self, sf, args, kwargs):
        """(the entry for this call, traced if needed; the call's tensors in feed order)."""
        spec = sf.spec
        if kwargs:
            args, kwargs = spec.normalize(args, kwargs)
        if len(args) < spec.n_positional:
            args = spec.complete(args)
        key, tensors = spec.key(args, kwargs, sf._instance, sf.training())
        entries = self._entries
        found = entries.get(key)
        changed = None
        if found is not None:
            for entry in found:
                check = entry.check
                if check is None or _holds(check):
                    break
            else:
                changed = guards.failing(found[0].guards)
                found = None
        if found is None:
            with self._lock:
                entry = self._trace_new(sf, args, kwargs, key, changed)
        else:
            entries.move_to_end(key)
        self._last_key = key
        self.last = entry
        return entry, tensors

    def _trace_new(self, sf, args, kwargs, key, changed):
        entries = self._entries
        for entry in entries.get(key, ()):  # another thread may have traced it meanwhile
            if not entry.guards or guards.failing(entry.guards) is None:
                return entry
        entry = _Entry(sf, args, kwargs)
        if entry.new_places:  # programs traced before may write it unseen: not reused
            entries.clear()
            self._count = 0
        entries.setdefault(key, []).insert(0, entry)
        entries.move_to_end(key)
        self._count += 1
        while self._count > max(1, self.max_size):
            oldest = next(iter(entries))
            lst = entries[oldest]
            lst.pop()
            self._count -= 1
            if not lst:
                del entries[oldest]
        self.traces += 1
        from .static_function import warn_retrace
        warn_retrace(sf, self._last_key, key, self.traces,
                     None if changed is None else guards.describe(changed))
        return entry

    def lookup(self, sf, args, kwargs):
        """The entry for this call (traced if needed)."""
        return self.find(sf, args, kwargs)[0]


@contextlib.contextmanager
def _gc_paused():
    # Tracing and compiling allocate many short-lived objects, few in cycles: cyclic GC passes
    # over them cost a good part of a first call and would free little.
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _trace(sf, args, kwargs, with_hooks: bool = False, state: bool = True):
    """Trace `sf` into a new program. Returns (program, feed vars, output leaves, tree,
    guards, side effects).
    With `with_hooks`, the forward pre- and post-hooks of `sf`'s Layer run around it (what
    `layer(x)` does), so they are part of the program. A trace that changed Python numbers
    reachable from the call is traced again with them as program state
    (`side_effects.py`); if that trace fails, they are guarded and replayed instead."""
    if not state:  # a program to save: Python values stay constants
        return _trace_once(sf, args, kwargs, with_hooks, (), state=False)
    try:
        return _trace_once(sf, args, kwargs, with_hooks, ())
    except side_effects.Promote as p:
        promote = p.slots
    try:
        return _trace_once(sf, args, kwargs, with_hooks, promote)
    except side_effects.Promote:
        raise AssertionError("d2s bug: numbers kept changing between traces") from None
    except Exception:  # noqa: BLE001  (the numbers stay Python values: guarded, replayed)
        return _trace_once(sf, args, kwargs, with_hooks, (), fixed=promote)


def _trace_once(sf, args, kwargs, with_hooks, promote, fixed=(), state=True):
    import runtime as rt
    program = rt.static.Program()
    names = sf.spec.arg_names
    feeds = []
    with rt.static.program_guard(program):
        counter = [0]
        copies = []

        def feed(x, hint):
            if _is_tensor(x) or _is_spec(x) or isinstance(x, np.ndarray):
                i = counter[0]
                counter[0] += 1
                spec = sf.spec.spec_for(i)
                shape = spec.shape if spec is not None else x.shape
                dtype = spec.dtype if spec is not None and isinstance(x, np.ndarray) else x.dtype
                if spec is not None and spec.name:
                    hint = spec.name
                name = hint if hint not in program.names else f"{hint}_{i}"
                v = rt.static.data(name, list(shape), dtype)
                v.stop_gradient = getattr(x, "stop_gradient", True)
                feeds.append(v)
                return v
            if pytree.is_container(x):
                items, how = pytree.children(x)
                keys = how[2] if isinstance(x, dict) or how[0] == "dataclass" else range(
                    len(items))
                fed = [feed(t, f"{hint}_{k}") for k, t in zip(keys, items)]
                if all(a is b for a, b in zip(fed, items)):
                    return x  # nothing fed inside: the user's own object
                copy = pytree.rebuild(how, fed)
                if type(x) in (list, dict):  # its changes are written to the user's one
                    copies.append(writeback.Copy(copy, x))
                return copy
            return x

        new_args = [feed(a, names[i] if i < len(names) else f"arg{i}") for i, a in
                    enumerate(args)]
        new_kwargs = {k: feed(kwargs[k], k) for k in sorted(kwargs)}
        fn = sf.trace_function()
        if with_hooks:
            fn = _with_hooks(sf._instance, fn)
        numbers = side_effects.feed_numbers(promote, program)
        feeds += [n.feed for n in numbers]
        with guards.recording() as reads:
            guards.record(sf._function, sf.function_reads(), sf._instance)
            before = writeback.before(sf, new_args, new_kwargs)
            try:
                try:
                    out = fn(*new_args, **new_kwargs)
                except RecursionError as e:
                    raise _endless_recursion(e) or e
                effects = side_effects.scan(before.log, numbers, fixed,
                                            sf.program_cache.effect_places) if state else \
                    side_effects.Effects()
                out = writeback.capture(sf, new_args, new_kwargs, out, before, numbers,
                                        copies)
                side_effects.unfeed(numbers)  # the first run feeds them and writes them back
            except BaseException:
                before.log.restore()  # the objects as they were before this trace
                side_effects.unfeed(numbers)
                raise
        from runtime.program.builder import current_builder
        b = current_builder()
        leaves, tree = pytree.flatten(out)
        from .operators.unbound import read
        read(leaves)  # a returned name bound on some paths only (`operators.unbound`)
        leaves = [b.variable_of(x) if _is_tensor(x) else x for x in leaves]
    found = tuple(g for g in reads.guards if not _is_variable(g[2]))  # not state fed in
    return (program, feeds, leaves, tree,
            found + tuple(effects.guards) + tuple(side_effects.number_guards(numbers)),
            effects)


def _is_variable(v) -> bool:
    return type(v).__name__ == "Variable"


def _holds(check) -> bool:
    try:
        return check()
    except Exception:  # noqa: BLE001  (an emptied closure cell, an odd __eq__: not the same)
        return False


def _endless_recursion(e: RecursionError):
    """A ConversionError for a recursion that never ends while tracing because its depth
    depends on a tensor (a tensor `if` traces both branches, the recursive one too), or None
    when the recursion is plain Python."""
    from .errors import ConversionError
    from .pyct import loader
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
    return pred is not None and type(pred).__name__ == "Variable"


def _with_hooks(layer, forward):
    """`forward` with `layer`'s own forward hooks around it, each converted like user code."""
    from .operators.calls import call
    from .errors import ConversionError

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


def has_hooks(layer) -> bool:
    return bool(getattr(layer, "_forward_pre_hooks", None)
                or getattr(layer, "_forward_post_hooks", None))


def build_program(sf, args, kwargs, with_hooks: bool = False) -> ConcreteProgram:
    """Trace `sf` for these arguments into a ConcreteProgram (not cached)."""
    program, feeds, leaves, _, _, _ = _trace(sf, args, kwargs, with_hooks, state=False)
    from runtime.program.variable import Variable
    outs = [v for v in leaves if isinstance(v, Variable)]
    params = [t for t in program.tensors.values() if not t.stop_gradient]
    return ConcreteProgram(program, feeds, outs, params)


class _Entry:
    """One signature's program, compiled, plus its training form (built on first use)."""

    def __init__(self, sf, args, kwargs):
        import runtime as rt
        from runtime.program.variable import Variable
        self.sf = sf
        with _gc_paused():  # one pause: a collection between tracing and compiling costs
            program, feeds, leaves, tree, self.guards, effects = _trace(sf, args, kwargs)
            self.check = guards.compile_check(self.guards)
            self.effects = effects if effects.writes else None
            self.new_places = effects.new_places
            self.numbers = [(n.feed.name, n.slot, n.feed.dtype.name) for n in effects.numbers]
            self.tree = tree
            self.leaves = leaves
            self.out_index = [i for i, v in enumerate(leaves) if isinstance(v, Variable)]
            outs = [leaves[i] for i in self.out_index]
            self.out_stop = [v.stop_gradient for v in outs]
            # outputs that are tensor arrays come back as Python lists of Tensors (without a
            # gradient path); the others are recorded for autograd
            self.tensor_out = [k for k, v in enumerate(outs) if not v.is_array]
            self.has_diff = any(outs[k].dtype.is_floating for k in self.tensor_out)
            self.feed_names = [v.name for v in feeds[:len(feeds) - len(self.numbers)]]
            self.params = [t for t in program.tensors.values() if not t.stop_gradient]
            self.concrete = ConcreteProgram(program, feeds, outs, self.params)
            self.executor = rt.static.Executor()
            self.compiled = self.executor.compiled(program, tuple(v.name for v in outs))
        self.fn = self.compiled.fn
        # the function returns exactly one tensor: its result is the call's result
        self.single = (tree is pytree.LEAF and self.out_index == [0] and self.tensor_out == [0]
                       and self.effects is None and not self.numbers)
        self._training = None
        from runtime.ops.registry import STATE
        from runtime.tensor import wrap
        self._state, self._wrap = STATE, wrap
        from runtime.autograd import record
        self._record = record  # (an import inside `run` costs about 1 us a call)
        self._float_out = self.has_diff  # (checked once, not per call)

    def run(self, inputs):
        """Run the program on the call's tensors (in feed order, as `ProgramCache.find` gives
        them)."""
        feed = {name: t._data for name, t in zip(self.feed_names, inputs)}
        for name, slot, dtype in self.numbers:  # Python numbers kept as program state
            feed[name] = np.asarray(slot.get(), dtype)
        train = self._state.grad_enabled and self.has_diff and (self.params or any(
            not t.stop_gradient for t in inputs))
        if not train and self.single:  # the common inference call: one tensor out
            try:
                return self._wrap(self.fn(feed)[0])
            except Exception as e:
                from runtime.program.executor import rewrite_error
                raise rewrite_error(e, self.compiled, self.concrete.main_program) from e
        if train:
            training = self._training or self._build_training()
            compiled, program = training.forward, training.split.forward
        else:
            compiled, program = self.compiled, self.concrete.main_program
        try:
            arrays = compiled.fn(feed)
        except Exception as e:
            from runtime.program.executor import rewrite_error
            raise rewrite_error(e, compiled, program) from e
        wrap = self._wrap
        n = len(self.out_index)
        outs = [wrap(a) if type(a) is not list else [wrap(x) for x in a]
                for a in arrays[:n]]
        recorded = outs if len(self.tensor_out) == n else [outs[k] for k in self.tensor_out]
        if train and self._float_out:
            self._record(_RUN_OP, tuple(inputs) + tuple(self.params), {}, tuple(recorded),
                         backward_fn=_Backward(training, arrays[n:]))
            for o, stop in zip(recorded, (self.out_stop[k] for k in self.tensor_out)):
                if stop:  # a value the program computes without a gradient path (detached)
                    o.stop_gradient = True
                    o._node = None
        if self.single:
            return outs[0]
        leaves = list(self.leaves)
        for i, o in zip(self.out_index, outs):
            leaves[i] = o
        result = writeback.apply(pytree.unflatten(self.tree, leaves))
        if self.effects is not None:
            self.effects.replay()  # Python values the traced code set, set again
        return result

    def _build_training(self) -> _Training:
        """A copy of the program with the gradients of the outputs (seeded by fed
        `<out>@GRAD` values) with respect to the inputs and captured parameters, split into
        the forward part this call runs and the backward part `loss.backward()` runs."""
        import runtime as rt
        from runtime.program.split import split_program
        program = self.concrete.main_program
        copy = program.clone()
        g0 = copy.global_block()
        n = len(g0.ops)
        outs = [g0.var(v.name) for v in self.concrete.outputs]
        with rt.static.program_guard(copy):
            # one seed per distinct floating output (a function may return a value twice;
            # indices among the recorded outputs: tensor arrays are not recorded)
            diff: dict = {}
            touts = [outs[k] for k in self.tensor_out]
            for i, v in enumerate(touts):
                if v.dtype.is_floating:
                    diff.setdefault(v.name, []).append(i)
            seeds = [rt.static.data(f"{name}@GRAD", touts[ix[0]].shape, touts[ix[0]].dtype)
                     for name, ix in diff.items()]
            wrt = [g0.var(name) for name in self.feed_names] + [
                g0.var(copy.captured[id(p)]) for p in self.params]
            grads = rt.static.gradients([touts[ix[0]] for ix in diff.values()], wrt,
                                         target_gradients=seeds)
        split = split_program(copy, n)
        slots = [i for i, g in enumerate(grads) if g is not None]
        forward = self.executor.compiled(
            split.forward, tuple(v.name for v in outs) + tuple(split.fetch))
        backward = self.executor.compiled(
            split.backward, tuple(grads[i].name for i in slots))
        self._training = _Training(forward, backward, split, [s.name for s in seeds],
                                   list(diff.values()), slots, self.feed_names)
        return self._training


class _Training:
    """The compiled forward and backward parts of one signature's training program."""

    def __init__(self, forward, backward, split, seed_names, diff, slots, feed_names):
        self.forward = forward
        self.backward = backward
        self.split = split
        self.seed_names = seed_names
        self.diff = diff  # per seed: the indices of the outputs it is the gradient of
        self.slots = slots  # indices of the inputs (then parameters) that get a gradient
        self.feed_names = feed_names


class _Backward:
    """The backward function of one recorded call: runs the backward program on the values
    the call's forward run saved. It holds them (like an eager autograd graph holds what its
    ops saved) until the recorded node is freed."""

    __slots__ = ("saved", "training")

    def __init__(self, training: _Training, saved):
        self.training = training
        self.saved = saved

    def __call__(self, node, out_grads):
        from runtime import backend
        from runtime.tensor import wrap
        t = self.training
        inputs = node.inputs
        feed = {n: x._data for n, x in zip(t.feed_names, inputs)}
        outs = node.outputs()
        for name, ix in zip(t.seed_names, t.diff):
            gs = [out_grads[i]._data for i in ix if out_grads[i] is not None]
            g = gs[0] if gs else backend.XP.zeros_like(outs[ix[0]]._data)
            for more in gs[1:]:
                g = g + more
            feed[name] = g
        slots = t.split.slots
        for slot, a in zip(slots, self.saved):
            slot._data = a
        try:
            arrays = t.backward.fn(feed)
        finally:
            for slot in slots:
                slot._data = None
        in_grads = [None] * len(inputs)
        for i, a in zip(t.slots, arrays):
            in_grads[i] = wrap(np.asarray(a) if backend.XP is np else a)
        return in_grads
