"""Static autodiff: `append_backward` and `gradients` append gradient ops to a program.

Each op's registered gradient rule is called with the op's Variables while the program is
being built, so the rule (written with public ops) appends the backward ops itself.

- `cond` / `switch_case`: the gradient is another op of the same kind on the same predicate,
  whose branches differentiate the corresponding forward branches; only the branch that ran
  contributes, and it reads the values the forward branch computed.
- `while`: the forward loop saves its carried values at the start of every iteration (the
  op gains one output array per carried value); the backward loop walks the iterations in
  reverse, recomputes the body from the saved values (`recompute`) and applies the body's
  gradient, accumulating into the carried gradients and the gradients of values the body reads
  from outside.
"""
from __future__ import annotations

import contextlib

from ..ops import registry
from ..ops.arrays import add_array_grads, array_length, array_read, zero_array_grad
from ..ops.creation import full, ones_like, zeros_like
from ..ops.logic import logical_not, logical_or, where
from ..ops.random import is_random
from ..ops.registry import bind
from ..ops.spectral import check_complex_grad
from . import eager_grads as eager
from .builder import STATE, Builder
from .control_flow import while_loop
from .debug_ops import GRAD_HOOK, SIDE_EFFECTS
from .ir import Block, Op, Program, block_free, defined_under
from .origin import format_origin
from .trip_paths import check_trip_path
from .variable import Variable

_NO_GRAD = {"print": None, "assert": None, "write_persistable": None, "create_array": None,
            "array_length": None}


@contextlib.contextmanager
def _building(program: Program, block: Block):
    prev = STATE.builder
    b = Builder(program)
    b.block = block
    b.cross_block_reads = True
    STATE.builder = b
    try:
        yield b
    finally:
        STATE.builder = prev


def _differentiable(v: Variable) -> bool:
    return v.dtype.is_floating or v.dtype.is_complex


def _zeros(v: Variable):
    return zero_array_grad(v) if v.kind == "array" else zeros_like(v)


class _Backward:
    def __init__(self, program: Program, sources: set, blocked: set = frozenset()):
        self.program = program
        self._free_cache: dict = {}
        # Values user code marked stop_gradient (or listed in no_grad_set) are constants, and
        # what `detach()` made is a leaf, also once user code sets its stop_gradient False.
        self.blocked = set(blocked) | {v.name for v in program.all_vars() if (
            v._user_stop or v.detached) and v.name not in sources}
        self.requires = set(sources) - self.blocked
        self._propagate(program.global_block())

    # ---- which values depend on the sources ----------------------------------------------
    def _propagate(self, block: Block) -> None:
        req = self.requires
        for op in block.ops:
            if op.type == "while":
                cblk, bblk = (self.program.blocks[i] for i in op.blocks)
                n = len(bblk.params)
                for _ in range(n + 1):  # carried dependence reaches a fixpoint in n rounds
                    for k in range(n):
                        if op.inputs[k] in req or bblk.results[k] in req:
                            req.add(bblk.params[k])
                            req.add(cblk.params[k])
                    self._propagate(bblk)
                for k in range(n):
                    if bblk.params[k] in req:
                        req.add(op.outputs[k])
                req.difference_update(self.blocked)
                continue
            for idx in op.blocks:
                self._propagate(self.program.blocks[idx])
            hit = any(n in req for n in op.input_names()) or any(
                n in req for idx in op.blocks for n in self.block_free(idx))
            if hit and not (registry.OPS[op.type].nondiff if op.type in registry.OPS else False):
                req.update(o for o in op.outputs if o not in self.blocked)

    def block_free(self, idx: int) -> set:
        free = block_free(self.program, idx, self._free_cache)
        redone = [op.blocks[0] for op in self.program.blocks[idx].ops
                  if op.type == "recompute" and not op.inputs]
        return free.difference(*(defined_under(self.program, i) for i in redone))

    def needs(self, name) -> bool:
        return name.__class__ is str and name in self.requires

    # ---- the reverse walk -----------------------------------------------------------------
    def run_block(self, block: Block, grads: dict) -> None:
        """Append the gradient ops of `block`'s ops (in reverse) to the current block,
        reading and updating `grads` (name -> gradient Variable)."""
        hooks = self.program.grad_hooks
        for op in reversed(block.ops):
            if op.type == "recompute" and not op.inputs:  # a branch computed again (its
                self.run_block(self.program.blocks[op.blocks[0]], grads)  # values: no outputs)
                continue
            if not any(grads.get(n) is not None for n in op.outputs):
                continue
            if hooks:  # the outputs' gradients are complete: their hooks may replace them
                for n in op.outputs:
                    if n in hooks:
                        apply_grad_hooks(hooks[n], grads, n)
            if op.type in ("cond", "switch_case"):
                self.branch_grad(op, block, grads)
            elif op.type == "while":
                self.while_grad(op, block, grads)
            elif op.type not in _NO_GRAD:
                self.op_grad(op, block, grads)

    def op_grad(self, op: Op, block: Block, grads: dict) -> None:
        opdef = registry.OPS[op.type]
        if opdef.nondiff or not any(self.needs(n) for n in op.input_names()):
            return
        if opdef.grad is None:
            raise NotImplementedError(f"op '{op.type}' has no gradient rule, so "
                                      "append_backward cannot differentiate through it")
        ins = [_value(block, x) for x in op.inputs]
        outs = [block.var(n) for n in op.outputs]
        if any(o.dtype.is_complex for o in outs):
            check_complex_grad(op.type)
        gs = [grads.get(n) for n in op.outputs]
        if len(outs) > 1:
            gs = [g if g is not None else _zeros(o) for g, o in zip(gs, outs)]
        in_grads = opdef.grad(ins, outs, gs, op.attrs)
        flag = _present_when([grads.get(n) for n in op.outputs])
        for x, g in zip(op.inputs, in_grads):
            if g is None:
                continue
            if isinstance(x, list):
                for t, gt in zip(x, g):
                    if gt is not None and self.needs(t):
                        _accumulate(grads, t, _masked(gt, flag))
            elif self.needs(x):
                _accumulate(grads, x, _masked(g, flag))

    def branch_grad(self, op: Op, block: Block, grads: dict) -> None:
        b = STATE.builder
        free = sorted({n for idx in op.blocks for n in self.block_free(idx)
                       if self.needs(n) and _differentiable(block.var(n))})
        if not free:
            return
        out_grads = [grads.get(n) for n in op.outputs]
        gblocks, locals_ = [], []
        for idx in op.blocks:
            fwd = self.program.blocks[idx]
            with b.sub_block() as gb:
                if STATE.create_graph and not _draws(self.program, idx):  # differentiated
                    # again: the branch's values are computed again here, so they are this
                    # block's own (`block_free`); a branch drawing random numbers would draw
                    # others
                    b.append("recompute", [], [], {}, (idx,))
                local: dict = {}
                for r, g in zip(fwd.results, out_grads):
                    if g is not None and self.needs(r):
                        _accumulate(local, r, g)
                self.run_block(fwd, local)
            gblocks.append(gb)
            locals_.append(local)
        # a value no branch's ops give a gradient gets none, as eagerly (not zeros)
        free = [n for n in free if any(local.get(n) is not None for local in locals_)]
        if not free:
            for gb in gblocks:  # (left empty: no op runs them)
                gb.ops = []
            return
        outer = b.block
        for gb, local in zip(gblocks, locals_):
            b.block = gb
            gb.results = [b.ref(local[n]) if local.get(n) is not None
                          else b.ref(_zeros(block.var(n))) for n in free]
        b.block = outer
        gblocks = [gb.idx for gb in gblocks]
        outs = [_like(b, block.var(n)) for n in free]
        b.append(op.type, list(op.inputs[:1]), [o.name for o in outs], dict(op.attrs),
                 tuple(gblocks))
        taken = _taken_flags(op, block, free, locals_)
        for n, o in zip(free, outs):
            o.grad_present_when = taken.get(n)
            _accumulate(grads, n, o)

    def while_grad(self, op: Op, block: Block, grads: dict) -> None:
        b = STATE.builder
        bblk = self.program.blocks[op.blocks[1]]
        n = len(bblk.params)
        pvars = [bblk.var(p) for p in bblk.params]
        live, reads = self._live_carried(op, bblk, grads)
        carried = [k for k in sorted(live)
                   if self.needs(bblk.params[k]) and _differentiable(pvars[k])]
        free = sorted(f for f in self.block_free(bblk.idx)
                      if f in reads and self.needs(f) and _differentiable(block.var(f)))
        if not carried and not free:
            return
        saves = _enable_saving(op, block, pvars)
        outs = [block.var(o) for o in op.outputs[:n]]
        start = array_length(saves[0]) - 1
        g_carry = [grads.get(op.outputs[k]) if grads.get(op.outputs[k]) is not None
                   else _zeros(outs[k]) for k in carried]
        g_free = [_zeros(block.var(f)) for f in free]
        reached: set = set()  # the free values the body's gradient ops give a gradient
        # free values a branch of a tensor `if` in the body reads: whether any trip gave them
        # a gradient (`_masked`), carried as a flag
        branchy = [f for f in free if f in self._one_branch_reads(bblk.idx)]
        always: set = set()  # (those given one on trips whatever their branches)

        def body(i, *state):
            gc, gf = list(state[:len(carried)]), list(state[len(carried):len(carried) + len(free)])
            flags = list(state[len(carried) + len(free):])
            saved = [array_read(s, i) for s in saves]
            for v, p in zip(saved, pvars):
                v.kind = p.kind  # a saved tensor array reads back as an array
            b.append("recompute", [v.name for v in saved], [], {}, (bblk.idx,))
            local: dict = {}
            for k, g in zip(carried, gc):
                r = bblk.results[k]
                if self.needs(r):
                    _accumulate(local, r, g)
            self.run_block(bblk, local)
            new_c = [local.get(bblk.params[k]) for k in carried]
            new_c = [g if g is not None else _zeros(pvars[k]) for g, k in zip(new_c, carried)]
            for j, f in enumerate(branchy):
                trip = getattr(local.get(f), "grad_present_when", None)
                if trip is None and local.get(f) is not None:
                    always.add(f)
                flags[j] = flags[j] if trip is None else logical_or(flags[j], trip)
            for f, g in zip(free, gf):
                if local.get(f) is not None:
                    reached.add(f)
                    _accumulate(local, f, g)
            new_f = [local[f] if local.get(f) is not None else g for g, f in zip(gf, free)]
            return [i - 1] + new_c + new_f + flags

        res = while_loop(lambda i, *s: i >= 0, body, [start] + g_carry + g_free + [
            full([], False, "bool") for _ in branchy])
        for k, g in zip(carried, res[1:1 + len(carried)]):
            if self.needs(op.inputs[k]):
                _accumulate(grads, op.inputs[k], g)
        given = dict(zip(branchy, res[1 + len(carried) + len(free):]))
        for f, g in zip(free, res[1 + len(carried):1 + len(carried) + len(free)]):
            if f in reached:  # (one no op gives a gradient gets none, as eagerly: not zeros)
                if f in given and f not in always:
                    g.grad_present_when = given[f]
                _accumulate(grads, f, g)

    def _one_branch_reads(self, idx: int) -> set:
        """Names a `cond` in block `idx` (or in a block below it) reads in one branch only."""
        out = set()
        for op in self.program.blocks[idx].ops:
            if op.type == "cond" and len(op.blocks) == 2:
                out |= self.block_free(op.blocks[0]) ^ self.block_free(op.blocks[1])
            for sub in op.blocks:
                out |= self._one_branch_reads(sub)
        return out


    def _live_carried(self, op: Op, bblk: Block, grads: dict) -> tuple:
        """(the carried positions of the `while` op whose gradient can be nonzero, the names
        the body reads to compute them): a carried value whose loop output has no gradient,
        and that no such value's next trip reads, has a zero gradient on every trip, so what
        only it reads (`unused = self.d(h)` in the body) gets none, as eagerly."""
        n = len(bblk.params)
        live = {k for k in range(n) if grads.get(op.outputs[k]) is not None}
        while True:
            reads = self._reads_of(bblk, {r for k in live if (r := bblk.results[k]).__class__
                                          is str})
            more = {k for k in range(n) if bblk.params[k] in reads} - live
            if not more:
                return live, reads
            live |= more

    def _reads_of(self, block: Block, wanted: set) -> set:
        """`wanted` and every name the ops of `block` computing them read, directly or in
        their blocks (walking back through the block)."""
        need = set(wanted)
        for op in reversed(block.ops):
            made = set(op.outputs)
            if op.type == "recompute":  # (a branch computed again: its values are made here)
                made.update(*(defined_under(self.program, i) for i in op.blocks))
            if made & need:
                need.update(op.input_names())
                for idx in op.blocks:
                    need |= self.block_free(idx)
        return need


def _taken_flags(op: Op, block: Block, free: list, locals_: list) -> dict:
    """For a `cond`: name -> a bool value true on the runs whose branch gives the value read
    from outside a gradient, where only one branch gives it one (eagerly the other run gives
    it none at all, and nothing it was computed from is differentiated)."""
    pred = _value(block, op.inputs[0])
    if op.type != "cond" or not isinstance(pred, Variable):
        return {}
    out = {}
    for n in free:
        has = [local.get(n) is not None for local in locals_]
        if has == [True, False]:
            out[n] = pred
        elif has == [False, True]:
            out[n] = logical_not(pred)
    return out


def _present_when(gs: list):
    """The bool value true on the runs where one of the gradients `gs` of an op's outputs
    exists in eager code (each from one branch of a tensor `if`), or None where one always
    does."""
    flags = [getattr(g, "grad_present_when", None) for g in gs if g is not None]
    if not flags or any(f is None for f in flags):
        return None
    flag = flags[0]
    for f in flags[1:]:
        if f is not flag:
            flag = logical_or(flag, f)
    return flag


def _masked(g, flag):
    """`g` where `flag` holds, zeros elsewhere: on the runs where eager code gives the op's
    outputs no gradient, its inputs get none from it either, not the rule's value at a zero
    gradient (`0 * inf` is NaN: the backward of `1 / norm` at a zero norm)."""
    if flag is None or not isinstance(g, Variable) or g.kind != "tensor":
        return g
    out = where(flag, g, zeros_like(g))
    out.grad_present_when = flag
    return out


def _draws(program: Program, idx: int) -> bool:
    """Whether block `idx` or a block below it has a random op."""
    return any(is_random(op.type) or any(_draws(program, sub) for sub in op.blocks)
               for op in program.blocks[idx].ops)


def _like(b, v: Variable) -> Variable:
    """A new variable of `v`'s kind, dtype and shape in the current block (a gradient)."""
    out = b.block.new_var(b.program.fresh_name(), (), v.dtype, kind=v.kind, stop_gradient=False)
    out._static_shape = v._static_shape
    return out


def _enable_saving(op: Op, block: Block, pvars: list) -> list:
    """Make the forward `while` op save its carried values each iteration; returns the
    arrays (Variables) it saves into."""
    n = len(pvars)
    if len(op.outputs) == n:
        program = block.program
        for p in pvars:
            v = block.new_var(program.fresh_name(), (), p.dtype, kind="array")
            v._static_shape = p._static_shape
            op.outputs.append(v.name)
        program.touch()
    return [block.var(s) for s in op.outputs[n:]]


def apply_input_hooks(program, grads: dict, names, ops) -> None:
    """The hooks of `names` that no op of `ops` computes (the program's inputs: its arguments,
    the tensors it reads, `leaf_hooks.py`)."""
    for n in names:
        if n in program.grad_hooks and not any(n in op.outputs for op in ops):
            apply_grad_hooks(program.grad_hooks[n], grads, n)


def apply_grad_hooks(hooks: list, grads: dict, name: str) -> None:
    """Pass `grads[name]` through each `register_hook` hook, in order: a `grad_hook` op that
    calls the hook with the gradient's values when the program runs (as eager backward does:
    a hook may look, save or print, and what it returns, if not None, replaces the
    gradient)."""
    g = grads.get(name)
    for hook, origin in list(hooks) if g is not None else ():
        g = bind(GRAD_HOOK, (g,), {"hook": hook, "where": format_origin(origin)})
    grads[name] = g


def _value(block: Block, x):
    if x.__class__ is str:
        return block.var(x)
    if isinstance(x, list):
        return [_value(block, t) for t in x]
    return getattr(x, "value", x)


def _accumulate(grads: dict, name: str, g) -> None:
    prev = grads.get(name)
    if prev is None:
        grads[name] = g
    elif prev.kind == "array":
        grads[name] = add_array_grads(prev, g)
    else:
        grads[name] = prev + g


# ---- public API ------------------------------------------------------------------------------

def _name_in(program: Program, x) -> str:
    if isinstance(x, Variable):
        return x.name
    if isinstance(x, str):
        return x
    name = program._captured.get(id(x))
    if name is None:
        raise ValueError(f"{x!r} is not used by this program")
    return name


def gradients(targets, inputs, target_gradients=None, no_grad_set=None,
              allow_unused=True) -> list:
    """Append ops computing d(sum of targets)/d(inputs); returns one Variable (or None when
    an input does not affect the targets) per input (`allow_unused=False`: `rt.grad`'s
    refusal of an input without a gradient path, checked per trip in loop bodies).

    >>> import runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [3], 'float32')
    ...     y = rt.tanh(x)
    ...     dx, = rt.static.gradients([y], [x])
    >>> dx.shape
    [3]
    """
    if not isinstance((targets if not isinstance(targets, (list, tuple)) else targets[0]),
                      Variable):  # eager Tensors: autograd computes the same now
        return eager.gradients(targets, inputs, target_gradients, no_grad_set)
    targets = [targets] if not isinstance(targets, (list, tuple)) else list(targets)
    single = not isinstance(inputs, (list, tuple))
    inputs = [inputs] if single else list(inputs)
    program = targets[0].program
    names = [_name_in(program, x) for x in inputs]
    tg = target_gradients if target_gradients is not None else [None] * len(targets)
    tg = [tg] if not isinstance(tg, (list, tuple)) else list(tg)
    g0 = program.global_block()
    if any(t.block is not g0 for t in targets):
        return _gradients_in_block(program, targets, names, tg, no_grad_set, allow_unused)
    blocked = {_name_in(program, x) for x in no_grad_set or ()}
    first = len(g0.ops)
    with _building(program, g0):
        bw = _Backward(program, (set(names) | _trainable(program)) - blocked, blocked)
        grads: dict = {}
        for t, g in zip(targets, tg):
            _accumulate(grads, t.name, g if g is not None else ones_like(t))
        bw.run_block(g0, grads)
        apply_input_hooks(program, grads, names, g0.ops)
    out = [grads.get(n) for n in names]
    drop_unread(program, first, {g.name for g in out if g is not None})
    return out


class NestedGradientError(ValueError):
    """`rt.grad` inside a loop whose condition is a tensor, with respect to a value from before
    the loop (the outputs may depend on it through earlier trips)."""


def _gradients_in_block(program: Program, targets, names, tg, no_grad_set,
                        allow_unused=True) -> list:
    """`gradients` called while a branch or loop body is being built (`rt.grad` inside a tensor
    `if`, or in a loop whose condition is a tensor). Every op of the enclosing blocks ran
    before, so the backward walks the targets' block and then its enclosing blocks, appending
    its ops to the targets' block, up to a loop body: values a loop carries into this trip
    come from earlier trips, which the program does not keep, so an input must be defined
    inside the innermost loop body (the carried value itself, or one computed from it)."""
    block = targets[0].block
    if any(t.block is not block for t in targets):
        raise NestedGradientError(
            "grad: the outputs are computed in different branches or loop bodies; compute "
            "them in the same one")
    walked = []
    for b in block.ancestors():
        walked.append(b)
        if b.params:  # a loop body (or condition): its carried values come from earlier trips
            break
    defined = set().union(*(b.vars for b in walked))
    if any(n not in defined for n in names):
        raise NestedGradientError(
            "grad inside a loop whose condition is a tensor differentiates with respect to a "
            "value from before the loop (a parameter, or an argument): the outputs may depend "
            "on it through earlier trips, which the program does not keep. Differentiate with "
            "respect to a value the loop carries or computes, or move the grad out of the loop")
    blocked = {_name_in(program, x) for x in no_grad_set or ()}
    check_trip_path(program, targets, [] if allow_unused else names)  # (a loop variable
    # detached on earlier trips)
    with _building(program, block):
        bw = _Backward(program, set(names) - blocked, blocked)
        for b in reversed(walked):
            if b is not program.global_block():
                bw._propagate(b)
        grads: dict = {}
        for t, g in zip(targets, tg):
            _accumulate(grads, t.name, g if g is not None else ones_like(t))
        for b in walked:
            bw.run_block(b, grads)
    return [grads.get(n) for n in names]


def drop_unread(program: Program, first: int, wanted: set, block: Block = None) -> None:
    """Remove the ops of `block` (the top level by default) from index `first` on (the
    backward's) whose outputs nothing reads: a gradient rule computes the gradients of all
    its inputs, also of those no source depends on (a layer's input: `x @ W`'s `g @ W.T`, a
    GEMM as long as the forward's), and only the needed ones are accumulated. Ops with
    effects, random ops and ops with blocks stay; the forward's ops are not touched."""
    g0 = block if block is not None else program.global_block()
    read = set(wanted) | {r for r in g0.results if r.__class__ is str}
    for op in g0.ops[:first]:
        read.update(op.input_names())
    kept = []
    for op in reversed(g0.ops[first:]):
        pure = not op.blocks and op.type in registry.OPS and op.type not in SIDE_EFFECTS \
            and not is_random(op.type) and not op.type.startswith(("array_", "create_array"))
        if pure and not any(o in read for o in op.outputs):
            for o in op.outputs:
                g0.vars.pop(o, None)
            continue
        kept.append(op)
        read.update(op.input_names())
        for idx in op.blocks:
            read.update(block_free(program, idx, {}))
    if len(kept) != len(g0.ops) - first:
        g0.ops[first:] = reversed(kept)
        program.touch()


def _trainable(program: Program) -> set:
    return {n for n, t in program.tensors.items() if not t.stop_gradient}


def append_backward(loss, parameter_list=None, no_grad_set=None, callbacks=None) -> list:
    """Append the backward ops of `loss` to its program; returns `[(param, grad)]` for every
    trainable parameter the loss depends on (or those in `parameter_list`). `param` is the
    eager Parameter the program captured, so `param.set_value(...)` in static mode writes it.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy(), name='w_doc')
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [3], 'float32')
    ...     loss = rt.sum(x * w)
    ...     (p, g), = rt.static.append_backward(loss)
    >>> p is w, g.shape
    (True, [3])
    """
    if not isinstance(loss, Variable):  # an eager Tensor: autograd computes the same now
        return eager.append_backward(loss, parameter_list, no_grad_set)
    program = loss.program
    if parameter_list is None:
        names = trainable_used(program)
    else:
        names = [_name_in(program, p) for p in parameter_list]
    grads = gradients([loss], [program.global_block().var(n) for n in names],
                      no_grad_set=no_grad_set)
    out = []
    for n, g in zip(names, grads):
        if g is not None:
            out.append((program.tensors.get(n, program.global_block().var(n)), g))
    return out


def trainable_used(program: Program) -> list:
    """The names of the trainable tensors `program` reads, in capture order: what a backward
    of the whole program gives gradients to."""
    used = set()
    for op in program.ops():
        used.update(op.input_names())
    return sorted(_trainable(program) & used, key=list(program.tensors).index)
