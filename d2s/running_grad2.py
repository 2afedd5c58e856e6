"""Gradients of a converted call that can be differentiated again (`create_graph=True`).

A training call is recorded as ONE autograd op whose backward (`running_backward.Backward`) runs a
compiled backward program on arrays: fast, but its results are constants. Under
`rt.grad(..., create_graph=True)` (a gradient penalty: WGAN-GP, R1) the gradients must be a
recorded computation of the call's inputs, parameters and output gradients, so that they can
be differentiated again. `ProgramCall` gives that: the call's program followed by the
gradient ops of its outputs (seeded by fed `<out>@GRAD` values), run whole (the forward ops
again: the saved values' dependence on the inputs matters) and recorded as one autograd op
itself, whose backward is a `ProgramCall` of that program's gradient, and so on for third
and higher derivatives.

A tensor `if` in the program works (its gradient computes the branch again,
`runtime/program/backward.py`), and a parameter or input whose gradient a run computes from no
output gradient (read only on a branch not taken, or on a branch where the gradient does not
depend on it) gets None, as eagerly (`computed_from`). What such a program cannot do is refused with
`SecondDerivativeError` at the `rt.grad`/`backward()` that asks for `create_graph`, naming the
function: a graph loop (its gradient recomputes the body from saved iterations, which is not
differentiable again: call the function eagerly there), random ops (dropout would draw another
mask than the call's) and Python numbers kept as program state (their values at the call are
gone): converted whole, a function that calls `rt.grad(..., create_graph=True)` builds its
second derivative in its own program instead.
"""
from __future__ import annotations

import runtime as rt
from runtime import backend
from runtime.autograd import record
from runtime.core import array_of, mode_state
from runtime.ops.random import is_random
from runtime.program.debug_ops import SIDE_EFFECTS
from runtime.program.executor import rewrite_error, with_cause
from runtime.tensor import wrap

_GRAD_OP = type("StaticProgramGradOp", (), {"name": "run_program_grad", "grad": None,
                                             "nondiff": False})()


class SecondDerivativeError(NotImplementedError):
    """A converted call whose gradient cannot be differentiated again."""


class ProgramCall:
    """`program` run on tensors fed as `feed_names`, giving `out_names` (a name may repeat),
    recorded as one autograd op of the feeds and `params` (the trainable tensors the program
    captured) when gradients are on. `name` is the converted function's (for errors)."""

    def __init__(self, program, feed_names: list, out_names: list, params: list, name: str):
        self.program = program
        self.feed_names = feed_names
        self.out_names = out_names
        self.params = params
        self.name = name
        # the predicates of the top-level branches: which gradients a run computes
        # (`computed_from`) depends on the branches it took
        self.preds = list(dict.fromkeys(op.inputs[0] for op in program.global_block().ops
                                        if op.type == "cond" and op.inputs[0].__class__ is str))
        self.compiled = rt.static.Executor().compiled(program, tuple(out_names + self.preds))
        self._grad_calls: dict = {}  # (outputs with a gradient, inputs needing one, create_graph)

    def __call__(self, tensors: list) -> list:
        feed = dict(zip(self.feed_names, map(array_of, tensors), strict=True))
        try:
            arrays = self.compiled.fn(feed)
        except Exception as e:
            raise with_cause(rewrite_error(e, self.compiled, self.program), e)
        n = len(self.out_names)
        outs = [wrap(a) for a in arrays[:n]]
        inputs = tuple(tensors) + tuple(self.params)
        if mode_state().grad_enabled and any(not x.stop_gradient for x in inputs):
            preds = [bool(p) for p in arrays[n:]]
            record(_GRAD_OP, inputs, {}, tuple(outs),
                   backward_fn=lambda node, out_grads: self.backward(node, out_grads, preds))
        return outs

    def backward(self, node, out_grads, preds=None) -> list:
        """The gradients of the recorded inputs (None where there is none), themselves
        recorded when `create_graph` asks for it. With `preds` (the values of the run's
        branch predicates, `self.preds`), an input whose gradient this run computes from no
        output gradient (only from the zeros of branches not taken) gets None, as eagerly;
        without, the caller decides that."""
        inputs = node.inputs
        present = tuple(g is not None for g in out_grads)
        needed = tuple(not x.stop_gradient for x in inputs)
        grads = self.grads_of(present, needed)
        n = len(self.feed_names)
        in_grads = grads(list(inputs[:n]), out_grads, node.outputs(), len(inputs))
        if preds is not None:
            for k in grads.unreached(dict(zip(self.preds, preds))):
                in_grads[k] = None
        return in_grads

    def grads_of(self, present: tuple, needed: tuple) -> _Gradients:
        """The (cached) gradient program for the outputs `present` marks, giving gradients to
        the inputs (the feeds, then the parameters) `needed` marks."""
        key = (present, needed, mode_state().create_graph)
        grads = self._grad_calls.get(key)
        if grads is None:
            grads = self._grad_calls[key] = _Gradients(self, present, needed)
        return grads


class _Gradients:
    """One gradient program of a `ProgramCall`: its program with the gradient ops of the
    present outputs appended, as a `ProgramCall` fed the inputs then one seed per distinct
    output name."""

    def __init__(self, call: ProgramCall, present: tuple, needed: tuple):
        check_differentiable_again(call.program, call.name)
        copy = call.program.clone()
        _drop_effects(copy)
        g0 = copy.global_block()
        # one seed per distinct output name, the sum of the gradients of its occurrences
        self.diff: dict = {}
        for i, name in enumerate(call.out_names):
            if present[i] and g0.var(name).dtype.is_floating:
                self.diff.setdefault(name, []).append(i)
        wrt = [g0.var(name) for name in call.feed_names] + [
            g0.var(copy.captured[id(p)]) for p in call.params]
        prev, state = mode_state().create_graph, mode_state()
        state.create_graph = True  # fused ops' rules build differentiable gradients
        try:
            with rt.enable_grad(), rt.static.program_guard(copy):
                seeds = [rt.static.data(f"{name}@GRAD", g0.var(name).shape, g0.var(name).dtype)
                         for name in self.diff]
                asked = [v for k, v in enumerate(wrt) if needed[k]]
                found = iter(rt.static.gradients([g0.var(name) for name in self.diff], asked,
                                                 target_gradients=seeds)
                             if asked and seeds else [None] * len(asked))
                grads = [next(found) if needed[k] else None for k in range(len(wrt))]
        finally:
            state.create_graph = prev
        self.slots = [k for k, g in enumerate(grads) if g is not None]
        self.first = len(call.program.global_block().ops)  # (the gradient ops come after)
        self.seed_names = [s.name for s in seeds]
        self._unreached: dict = {}  # branches taken -> inputs given no gradient
        self.call = ProgramCall(copy, call.feed_names + [s.name for s in seeds],
                                [grads[k].name for k in self.slots], call.params, call.name)

    def unreached(self, taken: dict) -> list:
        """The inputs (indices) whose gradient a run that took the branches `taken`
        (predicate -> truth) computes from no seed."""
        key = tuple(taken.values())
        got = self._unreached.get(key)
        if got is None:
            real = computed_from(self.call.program, self.first, self.seed_names, taken)
            got = self._unreached[key] = [k for k, name in zip(self.slots, self.call.out_names)
                                          if name not in real]
        return got

    def __call__(self, feeds: list, out_grads: list, outs: list, n_inputs: int) -> list:
        seeds = []
        for ix in self.diff.values():
            gs = [out_grads[i] for i in ix if out_grads[i] is not None]
            g = gs[0] if gs else wrap(backend.XP.zeros_like(array_of(outs[ix[0]])))
            for more in gs[1:]:
                g = g + more
            seeds.append(g)
        in_grads = [None] * n_inputs
        if not self.slots:
            return in_grads
        for k, g in zip(self.slots, self.call(feeds + seeds), strict=True):
            in_grads[k] = g
        return in_grads


def entry_call(entry) -> ProgramCall:
    """A converted call's program (its `running.Entry`'s) as a `ProgramCall` of the call's
    recorded inputs and outputs: what its backward runs under `create_graph`."""
    call = getattr(entry, "graph_call", None)
    if call is None:
        if entry.numbers:
            kept = ", ".join(getattr(slot, "path", n) for n, slot, _ in entry.numbers)
            raise SecondDerivativeError(
                f"a second derivative through the converted call of {entry.name} is not "
                f"supported: the program keeps Python numbers as state ({kept}), whose values "
                f"at the call are gone. Convert the function that calls "
                f"rt.grad(..., create_graph=True) as a whole instead")
        if entry._fed:
            kept = ", ".join(dict.fromkeys(getattr(p, "slot", None) and p.slot.path or
                                           p.place.path for _, p in entry._fed))
            raise SecondDerivativeError(
                f"a second derivative through the converted call of {entry.name} is not "
                f"supported: the program reads tensors kept across calls ({kept}) with their "
                "graphs from earlier calls. Store them detached (`.detach()`) if the "
                "gradient need not reach earlier calls, or run these calls eagerly "
                "(`d2s.enable_to_static(False)`)")
        call = entry.graph_call = ProgramCall(
            entry.concrete.main_program, list(entry.feed_names),
            [entry.outs[k].name for k in entry.tensor_out], list(entry.params), entry.name)
    return call


def computed_from(program, first: int, sources: list, taken: dict) -> set:
    """The names that the top-level ops of `program` from index `first` on (gradient ops)
    compute from `sources` (seeds) on a run whose top-level branches took `taken` (predicate
    -> truth): an op's outputs are, when it reads one of them; a branch op's, when the result
    of the branch taken is (of any branch, for branches inside branches). A gradient not among
    them is only zeros standing for "no gradient" (of a branch not taken, or of a value read
    for its shape): eager code has None there."""
    real = set(sources)
    for op in program.global_block().ops[first:]:
        _mark(program, op, real, taken)
    return real


def _mark(program, op, real: set, taken: dict) -> None:
    if not op.blocks:
        if any(n in real for n in op.input_names()):
            real.update(op.outputs)
        return
    if op.type == "cond" and op.inputs[0] in taken:
        blocks = [op.blocks[0 if taken[op.inputs[0]] else 1]]
    else:
        blocks = op.blocks
    for idx in blocks:
        block = program.blocks[idx]
        inner = set(real) | {n for n in op.input_names() if n in real}
        for sub in block.ops:
            _mark(program, sub, inner, {})
        real.update(o for o, r in zip(op.outputs, block.results) if r.__class__ is str
                    and r in inner)


def check_differentiable_again(program, name: str) -> None:
    """Raise `SecondDerivativeError` when the gradient of `program` (the converted function
    `name`'s) cannot be built as a differentiable program."""
    whole = (f"Convert the function that calls rt.grad(..., create_graph=True) (and the "
             f"backward of its result) as a whole instead, or call {name} eagerly there")
    for op in program.ops():
        why = None
        if is_random(op.type):
            why = (f"draws random numbers (op '{op.type}'): a gradient that runs it again "
                   f"would draw others than the call did. {whole}")
        elif op.type == "while":
            why = ("has a graph loop (a tensor `while` or `for`), whose gradient cannot be "
                   f"differentiated again. Call {name} eagerly where its gradient is "
                   f"differentiated again (undecorated, or marked d2s.not_to_static)")
        if why is not None:
            raise SecondDerivativeError(
                f"a second derivative through the converted call of {name} is not supported: "
                f"it {why}")


def _drop_effects(program) -> None:
    """Remove the ops that only have effects (running statistics written, prints, asserts):
    the call ran them already; its gradient runs the forward ops again for values only."""
    for b in program.blocks:
        b.ops = [op for op in b.ops if not (op.type in SIDE_EFFECTS and not op.outputs)]
    program.touch()
