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

import contextlib
import gc

import numpy as np

from . import writeback

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
    """Signature -> traced program for one StaticFunction; `len()` is the number of
    programs."""

    def __init__(self):
        self._entries: dict = {}
        self._keys: list = []
        self.last = None

    def __len__(self):
        return len(self._entries)

    def __iter__(self):
        return iter(self._entries)

    def lookup(self, sf, args, kwargs):
        key = None
        if not kwargs and sf._input_spec is None:
            key, tensors = _flat_key(sf, args)
        if key is None:
            key, _, tensors = _signature(sf, args, kwargs)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(sf, args, kwargs)
            self._keys.append(key)
            from .static_function import warn_retrace
            warn_retrace(sf, self._keys)
        entry.pending = tensors
        self.last = entry
        return entry


_TENSOR_CLASSES: set = set()
_PY_SCALARS = frozenset((int, float, bool, str, type(None)))


def _flat_key(sf, args):
    """The key of a call whose arguments are tensors and Python scalars only (the common
    case, kept cheap), or (None, None). Equal to what `_signature` gives for such calls."""
    parts = []
    tensors = []
    for a in args:
        cls = a.__class__
        if cls in _TENSOR_CLASSES:
            d = a._data
            parts.append((d.shape, d.dtype, a.stop_gradient))
            tensors.append(a)
        elif cls in _PY_SCALARS:
            parts.append(("py", cls, a))
        else:
            return None, None
    parts.append((id(sf._instance), sf.training(), len(args), ()))
    return tuple(parts), tensors


def _is_tensor(x) -> bool:
    return hasattr(x, "_data") and hasattr(x, "stop_gradient")


def _is_spec(x) -> bool:
    return type(x).__name__ == "InputSpec"


def _leaves(x, out: list) -> None:
    if isinstance(x, (list, tuple)):
        for t in x:
            _leaves(t, out)
    elif isinstance(x, dict):
        for k in x:
            _leaves(x[k], out)
    else:
        out.append(x)


def _signature(sf, args, kwargs):
    """(hashable key, specs of the tensor slots, the tensor arguments in order)."""
    leaves: list = []
    _leaves(args, leaves)
    if kwargs:
        _leaves([kwargs[k] for k in sorted(kwargs)], leaves)
    specs = sf._input_spec
    key = []
    slots = []
    tensors = []
    t_index = 0
    for x in leaves:
        if _is_tensor(x):
            _TENSOR_CLASSES.add(x.__class__)
            spec = specs[t_index] if specs is not None and t_index < len(specs) else None
            shape = _checked_shape(x, spec, t_index)
            key.append((shape, x._data.dtype, x.stop_gradient))
            slots.append(spec)
            tensors.append(x)
            t_index += 1
        elif _is_spec(x):
            key.append((x.shape, x.dtype.name, x.stop_gradient))
            slots.append(x)
            t_index += 1
        else:
            try:
                hash(x)
                key.append(("py", type(x), x))
            except TypeError:
                key.append(("py", type(x), repr(x)))
    inst = sf._instance
    key.append((id(inst), sf.training(), len(leaves), tuple(kwargs)))
    if len(leaves) != len(args) or kwargs:
        key.append(_structure((args, kwargs)))
    return tuple(key), slots, tensors


def _structure(x):
    """The nesting of lists/tuples/dicts (part of the key: it shapes the traced code)."""
    if isinstance(x, (list, tuple)):
        return (type(x), tuple(_structure(t) for t in x))
    if isinstance(x, dict):
        return (dict, tuple((k, _structure(v)) for k, v in x.items()))
    return None


def _checked_shape(x, spec, index: int) -> tuple:
    shape = x._data.shape
    if spec is None or not _is_spec(spec):
        return shape
    if len(spec.shape) != len(shape) or any(s not in (-1, d) for s, d in zip(spec.shape, shape)):
        raise ValueError(f"argument {index}: a tensor of shape {list(shape)} does not match "
                         f"its InputSpec shape {list(spec.shape)}")
    return spec.shape


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


def _trace(sf, args, kwargs, with_grad_feeds: bool = False):
    """Trace `sf` into a new program. Returns (program, feed vars, output leaves, tree)."""
    import runtime as rt
    program = rt.static.Program()
    names = sf.input_names(len(args))
    feeds = []
    with rt.static.program_guard(program):
        counter = [0]

        def feed(x, hint):
            if _is_tensor(x) or _is_spec(x):
                i = counter[0]
                counter[0] += 1
                spec = sf._input_spec[i] if sf._input_spec and i < len(sf._input_spec) else None
                shape = spec.shape if spec is not None and _is_spec(spec) else (
                    x.shape if _is_spec(x) else x._data.shape)
                dtype = x.dtype
                name = hint if hint not in program._names else f"{hint}_{i}"
                v = rt.static.data(name, list(shape), dtype)
                v.stop_gradient = x.stop_gradient
                feeds.append(v)
                return v
            if isinstance(x, (list, tuple)):
                return type(x)(feed(t, f"{hint}_{j}") for j, t in enumerate(x))
            if isinstance(x, dict):
                return {k: feed(t, f"{hint}_{k}") for k, t in x.items()}
            return x

        new_args = [feed(a, names[i] if i < len(names) else f"arg{i}") for i, a in
                    enumerate(args)]
        new_kwargs = {k: feed(kwargs[k], k) for k in sorted(kwargs)}
        before = writeback.before(sf, new_args, new_kwargs)
        out = sf.trace_function()(*new_args, **new_kwargs)
        out = writeback.capture(sf, new_args, new_kwargs, out, before)  # state left in objects
        from runtime.program.builder import current_builder
        b = current_builder()
        leaves, tree = _flatten(out)
        leaves = [b.variable_of(x) if _is_tensor(x) else x for x in leaves]
    return program, feeds, leaves, tree


def _flatten(x):
    if isinstance(x, (list, tuple)):
        parts = [_flatten(t) for t in x]
        return [leaf for p in parts for leaf in p[0]], (type(x), [p[1] for p in parts])
    if isinstance(x, dict):
        parts = [_flatten(x[k]) for k in x]
        return [leaf for p in parts for leaf in p[0]], (dict, list(x), [p[1] for p in parts])
    return [x], None


def _unflatten(tree, it):
    if tree is None:
        return next(it)
    if tree[0] is dict:
        return {k: _unflatten(t, it) for k, t in zip(tree[1], tree[2])}
    return tree[0](_unflatten(t, it) for t in tree[1])


def build_program(sf, args, kwargs) -> ConcreteProgram:
    """Trace `sf` for these arguments into a ConcreteProgram (not cached)."""
    program, feeds, leaves, _ = _trace(sf, args, kwargs)
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
            program, feeds, leaves, tree = _trace(sf, args, kwargs)
            self.tree = tree
            self.leaves = leaves
            self.out_index = [i for i, v in enumerate(leaves) if isinstance(v, Variable)]
            outs = [leaves[i] for i in self.out_index]
            self.feed_names = [v.name for v in feeds]
            self.params = [t for t in program.tensors.values() if not t.stop_gradient]
            self.concrete = ConcreteProgram(program, feeds, outs, self.params)
            self.executor = rt.static.Executor()
            self.compiled = self.executor.compiled(program, tuple(v.name for v in outs))
        self.fn = self.compiled.fn
        self._training = None
        self.pending = None
        from runtime.ops.registry import STATE
        from runtime.tensor import wrap
        self._state, self._wrap = STATE, wrap

    def run(self, args, kwargs):
        """Run the program on the tensors of the call (those `lookup` just found)."""
        inputs = self.pending
        self.pending = None
        if inputs is None:
            inputs = _signature(self.sf, args, kwargs)[2]
        feed = dict(zip(self.feed_names, [t._data for t in inputs]))
        train = self._state.grad_enabled and (self.params or any(
            not t.stop_gradient for t in inputs))
        if train:
            training = self._training or self._build_training()
            compiled, program = training.forward, training.split.forward
        else:
            compiled, program = self.compiled, self.concrete.main_program
        try:
            arrays = compiled.fn(feed)
        except Exception as e:
            from runtime.executor import _rewrite
            raise _rewrite(e, compiled, program) from e
        wrap = self._wrap
        n = len(self.out_index)
        outs = [wrap(a) for a in arrays[:n]]
        if train and any(o.dtype.is_floating for o in outs):
            from runtime.autograd import record
            record(_RUN_OP, tuple(inputs) + tuple(self.params), {}, tuple(outs),
                   backward_fn=_Backward(training, arrays[n:]))
        leaves = list(self.leaves)
        for i, o in zip(self.out_index, outs):
            leaves[i] = o
        return writeback.apply(_unflatten(self.tree, iter(leaves)))

    def _build_training(self) -> _Training:
        """A copy of the program with the gradients of the outputs (seeded by fed
        `<out>@GRAD` values) with respect to the inputs and captured parameters, split into
        the forward part this call runs and the backward part `loss.backward()` runs."""
        import runtime as rt
        from runtime.program.serialize import copy_program
        from runtime.program.split import split_program
        program = self.concrete.main_program
        copy = copy_program(program)
        user_stop = {v.name for v in program.all_vars() if v._user_stop}
        for v in copy.all_vars():
            v._user_stop = v.name in user_stop
        g0 = copy.global_block()
        n = len(g0.ops)
        outs = [g0.var(v.name) for v in self.concrete.outputs]
        with rt.static.program_guard(copy):
            # one seed per distinct floating output (a function may return a value twice)
            diff: dict = {}
            for i, v in enumerate(outs):
                if v.dtype.is_floating:
                    diff.setdefault(v.name, []).append(i)
            seeds = [rt.static.data(f"{name}@GRAD", outs[ix[0]].shape, outs[ix[0]].dtype)
                     for name, ix in diff.items()]
            wrt = [g0.var(name) for name in self.feed_names] + [
                g0.var(copy._captured[id(p)]) for p in self.params]
            grads = rt.static.gradients([outs[ix[0]] for ix in diff.values()], wrt,
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
