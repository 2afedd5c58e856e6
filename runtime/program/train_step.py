"""A whole training step in one program: `loss.backward()`, `p.grad`, `optimizer.step()` and
`optimizer.clear_grad()` while a program is being built (inside `@d2s.to_static`).

Eager training keeps gradients in `Tensor.grad`; a program cannot hold Python state, so the
`.grad` of each tensor the step touches is read and written by ops that act on that Python
attribute when the program runs, in program order:

- `grad_accumulate(<slot>, %g)`: `%g` if `.grad` is None now, else `.grad + %g` (what eager
  `backward()` adds to a gradient left from before);
- `grad_write(<slot>, %g)`: `.grad = Tensor(%g)`; `grad_clear(<slot>) {set_to_zero}`: eager
  `clear_grad` (zeros where a gradient exists, or None);
- `grad_read(<slot>)` / `grad_expect_none(<slot>)`: the gradient a step uses that this program
  did not compute (`.grad` read before `backward()`, a parameter the loss does not reach):
  the program was built for one case (a gradient, or none) and raises if the other is met.

While building, each touched tensor's gradient *as the program will have it at this point* is
a value of this module's view (per program): a Variable, None, or zeros not yet built. The
optimizer update ops then read those Variables, so forward, backward and update are one
program (the elementwise update chain fuses), and parameters, optimizer state and `.grad` are
what eager code leaves after the same calls.
"""
from __future__ import annotations

import functools

from .. import core
from ..autograd import FREED
from ..dtypes import bool_
from ..ops import registry
from ..ops.creation import zeros
from ..ops.logic import logical_not
from ..ops.registry import STATE, Meta, bind
from . import origin
from .backward import gradients, trainable_used
from .branch_backward import gradients_in_branch
from .builder import Training, install_training
from .grad_views import RUN as _RUN
from .grad_views import UNKNOWN as _UNKNOWN
from .grad_views import ZERO as _ZERO
from .grad_slots import GradSlot, UpdateSlot
from .grad_views import fresh
from .leaf_hooks import live_hooks
from .leaf_reads import gradients_and_reach
from .reach_paths import gradient_sites
from .reach_values import top_level
from .variable import Variable

_UNKNOWN_USED = (
    "the gradient of %s is used after clear_grad() inside the converted step, but whether "
    "it is zeros, None or a gradient depends on the run (a clear_grad() or `.grad` write "
    "under an `if` whose condition is a tensor, or the gradient before the call); compute "
    "it with loss.backward() first, or move clear_grad() to the end of the step")
_CUT_LOSS = ("backward() on a tensor with stop_gradient=True: nothing it depends on needs a "
             "gradient. Set stop_gradient=False on the inputs you want gradients for.")


def _name(slot) -> str:
    return slot.tensor.name or "a tensor"


def _read_kernel(xp, slot, or_zeros=False):
    g = slot.tensor._grad
    if g is None and or_zeros:  # (a gradient the run decides: where it has none, zeros
        t = slot.tensor  # stand in for it, which `grad_present` keeps from being used)
        return xp.zeros(t._data.shape, t._data.dtype)
    if g is None:
        raise RuntimeError(
            f"{_name(slot)} has no gradient (.grad is None) now, but it had one when this "
            "step was converted, and the converted code uses it (reads .grad, or updates "
            "the parameter with it). Keep .grad set the same way between calls, or call "
            "clear_grad(set_to_zero=True) (zeros) instead of leaving it None.")
    return g._data


def _expect_none_kernel(xp, slot):
    if slot.tensor._grad is not None:
        raise RuntimeError(
            f"{_name(slot)} has a gradient now, but had none (.grad was None) when this step "
            "was converted: the converted step neither reads it nor updates the parameter "
            "with it, as eager code would. Clear it (p.clear_grad()) before the call, or "
            "compute it inside the step.")
    return ()


def _accumulate_kernel(xp, slot, g):
    cur = slot.tensor._grad
    return g if cur is None else cur._data + g


def _write_kernel(xp, slot, value, reached=None):
    if reached is None or bool(reached):  # (a parameter this run did not reach: unchanged)
        slot.tensor._grad = core.wrap(value)
    return ()


def _present_kernel(xp, slot):
    return xp.asarray(slot.tensor._grad is not None)


def _clear_kernel(xp, slot, set_to_zero=True, dtype=None):
    t = slot.tensor
    if dtype is not None:  # the program wrote a gradient of this dtype just before (the
        # write was dropped): zeros of it, or None
        t._grad = core.wrap(xp.zeros(t._data.shape, dtype)) if set_to_zero else None
    elif t._grad is not None:
        t._grad = core.wrap(xp.zeros_like(t._grad._data)) if set_to_zero else None
    return ()


def _cut_check_kernel(xp, cut):
    if bool(cut):
        raise RuntimeError(_CUT_LOSS)
    return ()


def _updated_kernel(xp, slot, when=None):
    if when is None or bool(when):
        slot.optimizer._note_update(slot.name)
    return ()


def _like(slot, *a, **k):
    t = slot.tensor
    return Meta(tuple(t._data.shape), t.dtype)


def _none(*a, **k):
    return ()


def _bool(*a, **k):
    return Meta((), bool_)


def _acc_infer(slot, g):
    return Meta(g.shape, g.dtype)


GRAD_READ = registry.register(
    "grad_read", kernel=_read_kernel, infer=_like, nondiff=True, amp="keep",
    doc="The `.grad` of an eager tensor when the op runs (raises when it is None; zeros "
        "with `or_zeros`).")
GRAD_EXPECT_NONE = registry.register(
    "grad_expect_none", kernel=_expect_none_kernel, infer=_none, nondiff=True, amp="keep",
    doc="Raise when the `.grad` of an eager tensor is not None when the op runs.")
GRAD_ACCUMULATE = registry.register(
    "grad_accumulate", kernel=_accumulate_kernel, infer=_acc_infer, nondiff=True, amp="keep",
    doc="`g` plus the `.grad` of an eager tensor when the op runs (`g` when it is None).")
GRAD_WRITE = registry.register(
    "grad_write", kernel=_write_kernel, infer=_none, nondiff=True, amp="keep",
    doc="Set the `.grad` of an eager tensor to a new Tensor holding `value` (when the "
        "optional bool `reached` is true).")
GRAD_PRESENT = registry.register(
    "grad_present", kernel=_present_kernel, infer=_bool, nondiff=True, amp="keep",
    doc="Whether the `.grad` of an eager tensor is not None when the op runs.")
CUT_CHECK = registry.register(
    "backward_cut_check", kernel=_cut_check_kernel, infer=_none, nondiff=True, amp="keep",
    doc="Raise eager `backward()`'s error when the bool `cut` is true: the loss has no "
        "gradient path on this run (a tensor `if` detached it).")
GRAD_CLEAR = registry.register(
    "grad_clear", kernel=_clear_kernel, infer=_none, nondiff=True, amp="keep",
    doc="Eager `clear_grad`: the `.grad` of an eager tensor becomes zeros (set_to_zero) or "
        "None, when it is not None.")
PARAM_UPDATED = registry.register(
    "param_updated", kernel=_updated_kernel, infer=_none, nondiff=True, amp="keep",
    doc="Record in an optimizer that it updated a parameter (when the optional bool `when` "
        "is true): the order of its state_dict().")

OPS = ("param_updated", "grad_read", "grad_expect_none", "grad_accumulate", "grad_write",
       "grad_clear", "grad_present", "backward_cut_check")


# ---- the view of gradients while building ----------------------------------------------------

def _builder():
    return STATE.builder


def _state(program):
    """The per-program record: the gradients' entries by id(tensor) and what reads them."""
    st = program.__dict__.get("_train_step")
    if st is None:
        st = program._train_step = _StepState()
    return st


class _StepState:
    __slots__ = ("decided_reads", "grads", "sometimes_reached")

    def __init__(self):
        self.grads: dict = {}
        # ids of tensors read only under tensor `if` branches or in graph loop bodies
        self.sometimes_reached: set = set()
        # names of the Variables `t.grad` gave for those tensors (`grad_presence`)
        self.decided_reads: set = set()


def _entry(program, t):
    st = _state(program)
    e = st.grads.get(id(t))
    if e is None:
        e = st.grads[id(t)] = fresh(t, GradSlot(t))
    return e


def _known(e):
    """The gradient of entry `e` at this point of the program: checked against the trace's
    case (None, or a gradient) the first time it matters."""
    if _builder().block.idx != 0:
        return _known_in_branch(e)
    if e[2] is _RUN:
        e[2] = _read_run(e)
    if not e[3]:
        t, slot = e[0], e[1]
        e[4] = None
        if t._grad is None:
            bind(GRAD_EXPECT_NONE, (slot,), {})
            e[2] = None
        else:
            e[2] = bind(GRAD_READ, (slot,), {})
        e[3] = True
    if e[2] is _ZERO:
        t = e[0]
        e[2] = zeros(list(t._data.shape), t.dtype)
    if e[2] is _UNKNOWN:
        raise RuntimeError(_UNKNOWN_USED % (e[0].name or 'a tensor'))
    return e[2]


def _known_in_branch(e):
    """`_known` inside a tensor `if`'s branch (`opt.step()` there): what the branch reads is
    built in it and not kept in the view (the code after the `if` runs whichever branch ran)."""
    t = e[0]
    if e[2] is _RUN:
        return _read_run(e)
    if not e[3]:
        if t._grad is None:
            bind(GRAD_EXPECT_NONE, (e[1],), {})
            return None
        return bind(GRAD_READ, (e[1],), {})
    if e[2] is _ZERO:
        return zeros(list(t._data.shape), t.dtype)
    if e[2] is _UNKNOWN:
        raise RuntimeError(_UNKNOWN_USED % (t.name or 'a tensor'))
    return e[2]


def _read_run(e):
    """`.grad` as the run left it, after a tensor `if`'s branch wrote it (`_RUN`); of a
    tensor whose gradient the run decides (`sometimes_reached`), zeros where it has none."""
    decided = id(e[0]) in _state(_builder().program).sometimes_reached
    return bind(GRAD_READ, (e[1],), {"or_zeros": True} if decided else {})


def _in_branch(what: str) -> bool:
    """Whether the point being built is in a branch of a tensor `if` (an optimizer step or
    clear_grad() there runs on the runs that take it, as eager code does); raises in the
    body of a graph loop, whose trips the program does not unroll."""
    block = _builder().block
    if block.idx == 0:
        return False
    if any(b.params for b in block.ancestors()):  # (a loop body's or test's loop variables)
        raise RuntimeError(
            f"{_here(what)} inside a loop whose condition is a tensor (a graph loop): a "
            "converted training step changes gradients, parameters and optimizer state in "
            "its top level or in the branches of tensor `if`s. Loop over the micro-batches "
            "with a Python loop (`for x in xs:` over a list, or `range` of a Python int), or "
            "move it after the loop.")
    return True


def _origin():
    return origin.capture(3)


def _here(where: str) -> str:
    o = _origin()
    return f"{where} (at {o[0]}:{o[1]})" if o and o[0] else where


def _top_level(what: str) -> None:
    """Gradients are program state of the whole function: not set inside a tensor branch."""
    if _builder().block.idx != 0:
        raise RuntimeError(
            f"{_here(what)} inside an `if` or loop whose condition is a tensor: a converted "
            "training step handles gradients for the whole function. Move it out of the "
            "tensor `if`/loop (compute the values in the branch and return them from it).")


def _in_place_in_branch(t, value) -> bool:
    """A gradient read inside a tensor `if`'s branch and written in place there
    (`p.grad.set_value(p.grad * coef)`): `p.grad = value` on the runs that take it; False
    at the top level (the program's value is rewritten in place, as elsewhere)."""
    if _builder().block.idx == 0:
        return False
    set_grad(t, value)
    return True


def grad_of(t):
    """`t.grad` while building."""
    b = _builder()
    e = _entry(b.program, t)
    if not e[3] or e[2] is _ZERO or e[2] is _UNKNOWN:
        _top_level(f"reading {t.name or 'a tensor'}.grad")
    g = _known(e)
    if b.block.idx != 0 and isinstance(g, Variable):  # (`inplace.write_into` asks it)
        g.__dict__["in_place_write"] = functools.partial(_in_place_in_branch, t)
    st = _state(b.program)
    if id(t) in st.sometimes_reached and isinstance(g, Variable):
        st.decided_reads.add(g.name)
        if g.none_when is None:  # (returned or written back: eager's None on the runs
            g.none_when = logical_not(grad_presence(g))  # whose backward missed `t`)
    return g


def grad_presence(v):
    """While building: `v is not None` for a Variable that `t.grad` gave, where the run
    decides whether `t` has a gradient (`sometimes_reached`): a 0-d bool Variable; None for
    any other value (Python's `is` answers). Raises where `t.grad` changed since the read
    (the program would answer for the gradient of now)."""
    b = _builder()
    st = b.program.__dict__.get("_train_step") if b is not None else None
    if st is None or getattr(v, "name", None) not in st.decided_reads:
        return None
    for e in st.grads.values():
        if e[2] is v and id(e[0]) in st.sometimes_reached:
            e[4] = None  # (read when run: `has_grad_now`)
            return bind(GRAD_PRESENT, (e[1],), {})
    raise RuntimeError(
        "of a .grad read earlier, whose presence the run decides (whether backward() reached "
        "the tensor); its .grad changed since the read (clear_grad() or a write), so the "
        "program cannot answer for the value read. Test `p.grad is None` before changing it.")


def set_grad(t, value) -> None:
    """`t.grad = value` (None: `t.clear_grad()`) while building."""
    b = _builder()
    e = _entry(b.program, t)
    if _in_branch(f"setting {t.name or 'a tensor'}.grad"):
        _set_in_branch(b, e, value)
        return
    if value is None:
        _clear(e, False)
        e[2], e[3] = None, True
        return
    v = b.variable_of(value)
    if list(v.shape) != list(t.shape):
        raise ValueError(f"{t.name or 'tensor'}.grad = a value of shape {list(v.shape)}: the "
                         f"tensor has shape {list(t.shape)}")
    _write(e, v, _where_present(b.program, t, e, v))
    e[2], e[3] = v, True


def _set_in_branch(b, e, value) -> None:
    """`t.grad = value` in a tensor `if`'s branch: a write (a clear, for None) on the runs
    that take it; after it, a gradient present before is `.grad` as the run leaves it
    (`_RUN`), one whose presence the run decides is refused where it is used (`_UNKNOWN`)."""
    t = e[0]
    present = (t._grad is not None) if not e[3] else (
        isinstance(e[2], Variable) or e[2] is _ZERO or e[2] is _RUN)
    if value is None:
        bind(GRAD_CLEAR, (e[1],), {"set_to_zero": False})
        e[2], e[3], e[4] = _UNKNOWN, True, None
        return
    v = b.variable_of(value)
    if list(v.shape) != list(t.shape):
        raise ValueError(f"{t.name or 'tensor'}.grad = a value of shape {list(v.shape)}: the "
                         f"tensor has shape {list(t.shape)}")
    bind(GRAD_WRITE, (e[1], v), {})
    e[2], e[3], e[4] = (_RUN if present else _UNKNOWN), True, None


def _where_present(program, t, e, v):
    """`p.grad = p.grad * coef` (`clip_grad_norm_`, unscaling) for a tensor whose gradient
    the run decides (`sometimes_reached`): a 0-d bool Variable, whether it has one when the
    program runs, so the write leaves eager's None where it has none (eager code computing
    from a None gradient never gets there); None for any other write."""
    if id(t) not in _state(program).sometimes_reached or not isinstance(e[2], Variable):
        return None
    wanted, src = {v.name}, e[2].name
    for op in reversed(program.global_block().ops):
        if wanted.intersection(op.outputs):
            for x in op.inputs:
                wanted.update(x if isinstance(x, list) else [x])
    return bind(GRAD_PRESENT, (e[1],), {}) if src in wanted else None


def _write(e, v, reached=None) -> None:
    bind(GRAD_WRITE, (e[1], v) if reached is None else (e[1], v, reached), {})
    # (a write that depends on the run is never dropped for a clear after it: `_clear`)
    e[4] = _builder().block.ops[-1] if reached is None else None


def has_grad_now(t):
    """While building: a 0-d bool Variable, whether `t.grad` is not None when the program
    runs this point, for a tensor read only under tensor `if` branches or in graph loop
    bodies (the run decides
    whether backward() reached it, as eager autograd does); None for any other tensor (the
    program knows)."""
    b = _builder()
    if id(t) not in _state(b.program).sometimes_reached:
        return None
    e = _entry(b.program, t)
    e[4] = None  # (it reads `.grad` when run: a write before it is not dropped, `_clear`)
    return bind(GRAD_PRESENT, (e[1],), {})


def note_update(optimizer, name: str, when=None) -> bool:
    """While building a training step (a converted function that updates parameters): an op
    that records in `optimizer` that it updated parameter `name` when the program runs this
    point (and the 0-d bool `when` holds). False for another program (`minimize` in a static
    program: its state is there once built)."""
    if _builder().program.__dict__.get("_train_step") is None:
        return False
    slot = UpdateSlot(optimizer, name)
    bind(PARAM_UPDATED, (slot,) if when is None else (slot, when), {})
    return True


def _reached(program, names, forward_ops, loss: str) -> dict:
    """`name -> 0-d bool Variable`: for tensors that reach `loss` along a gradient path only
    under conditions (`reach_paths.gradient_sites`: branches of top-level tensor `if`s, bodies
    of graph loops and the branches their trips took; a read a taken branch detaches does not
    count), whether this run reached them."""
    from ..ops.logic import logical_and, logical_or
    made: dict = {}  # (one flag per condition, whatever reads under it)
    out = {}
    for name, sites in gradient_sites(program, names, [loss], forward_ops).items():
        flags = [functools.reduce(logical_and, [top_level(program, c, made) for c in site])
                 for site in sites]
        out[name] = functools.reduce(logical_or, flags)
    return out


def _clear(e, set_to_zero: bool) -> None:
    """A `grad_clear` op; a `grad_write` just before it (nothing read the gradient since) is
    dropped, and the clear sets what it would have cleared."""
    attrs = {"set_to_zero": set_to_zero}
    w = e[4]
    ops = _builder().program.global_block().ops
    at = next((i for i in range(len(ops) - 1, -1, -1) if ops[i] is w), None) \
        if w is not None else None
    if at is not None:
        del ops[at]
        written = _builder().program.global_block().var(w.inputs[1])
        attrs["dtype"] = written.dtype.name
    e[4] = None
    bind(GRAD_CLEAR, (e[1],), attrs)


def clear_grads(tensors, set_to_zero: bool) -> None:
    """`optimizer.clear_grad(set_to_zero)` while building: eager's rule, when the program
    runs; the view follows it where it knows the gradient."""
    b = _builder()
    if _in_branch("optimizer.clear_grad()"):  # (on the runs that take the branch: after
        for t in tensors:  # the `if`, the gradient is the run's)
            e = _entry(b.program, t)
            bind(GRAD_CLEAR, (e[1],), {"set_to_zero": set_to_zero})
            e[2], e[3], e[4] = _UNKNOWN, True, None
        return
    for t in tensors:
        e = _entry(b.program, t)
        _clear(e, set_to_zero)
        if not set_to_zero:
            e[2], e[3] = None, True
        elif e[3]:
            e[2] = e[2] if e[2] is None or e[2] is _UNKNOWN else _ZERO
        else:  # zeros or None, as the gradient before the call was
            e[2], e[3] = _UNKNOWN, True


def grads_for_step(tensors) -> list:
    """`[(param, grad Variable)]` of an optimizer step while building (eager: every
    parameter whose `.grad` is not None)."""
    b = _builder()
    _in_branch("optimizer.step()")
    out = []
    for t in tensors:
        if t.stop_gradient:
            continue
        g = _known(_entry(b.program, t))
        if g is not None:
            out.append((t, g))
    return out


def backward(loss: Variable, grad_tensor=None, retain_graph: bool = False) -> None:
    """`loss.backward()` while building: append the backward of the program so far and add
    the gradients into `.grad` of every trainable tensor the loss depends on, as eager
    `backward()` does."""
    b = _builder()
    program = b.program
    where = _here("backward()")  # (the loss's Variable name is internal: never shown)
    if loss.block.program is not program:
        raise RuntimeError(f"{where}: the tensor belongs to another program than the one "
                           "being built")
    if any(blk.params for blk in b.block.ancestors()):  # (a tensor `if`'s branch runs
        raise RuntimeError(  # it when taken, `branch_backward`; a graph loop's trips are not)
            f"{where} inside a loop whose condition is a tensor (a graph loop): a converted "
            "step computes gradients in its top level or in the branches of tensor `if`s. "
            "Loop over the micro-batches with a Python loop (`for x in xs:` over a list, or "
            "`range` of a Python int), or collect the losses in the loop and call backward() "
            "on their sum after it.")
    st = _state(program)
    if not loss.dtype.is_floating:
        raise TypeError(f"backward() needs a floating-point tensor, got {loss.dtype.name} "
                        "(integer and bool results carry no gradient)")
    if loss.stop_gradient:
        raise RuntimeError(_CUT_LOSS)
    g0 = program.global_block()
    fed = [n for n in program.inputs if n in g0.vars and not g0.vars[n].stop_gradient]
    if fed:
        raise RuntimeError(
            f"{where}: the argument(s) {', '.join(repr(n) for n in fed)} of the converted "
            "function require a gradient (stop_gradient=False); a converted step gives "
            "gradients to parameters and other tensors it reads, not to its arguments. Pass "
            "them with stop_gradient=True, or read them from a Layer/global instead.")
    names = trainable_used(program)
    for n in names:
        t = program.tensors[n]
        if getattr(t, "_node", None) is not None:
            raise RuntimeError(
                f"{where}: {t.name or n} is a tensor computed outside the converted function "
                "with a gradient path of its own (not a leaf); eager backward() would go on "
                "into how it was computed, which the program cannot. Compute it inside the "
                "function, or pass it detached (x.detach()).")
    seed = None
    if grad_tensor is not None:
        seed = [b.variable_of(grad_tensor)]
    # (a backward() or rt.grad before this one without retain_graph freed its graph: eager
    # raises where this loss's gradient path meets it; micro-batch losses apart from it run)
    b.check_not_freed([loss], RuntimeError(FREED))
    if loss.stop_when is not None:  # (detached on the runs a tensor `if` decides: raise there)
        bind(CUT_CHECK, (loss.stop_when,), {})
    forward_ops = list(g0.ops)  # (the backward ops read every parameter)
    live_hooks(program, names)  # (the leaves' `register_hook` hooks, as eager backward runs them)
    if b.block.idx != 0:  # (on the runs that take the branch)
        grads, reached = gradients_in_branch(program, b.block, loss, names, seed)
    else:
        grads, reached = gradients_and_reach(  # (loops save their iterations now)
            program, gradients, lambda ns: _reached(program, ns, forward_ops, loss.name),
            loss, names, seed)
    program.in_program_backward = True  # d2s: the call's results need no gradient path
    for n, g in zip(names, grads):
        if g is None:
            continue
        t = program.tensors[n]
        if n in reached:
            st.sometimes_reached.add(id(t))
        g.stop_gradient = True
        e = _entry(program, t)
        if not e[3] or e[2] is _UNKNOWN or e[2] is _RUN:  # the gradient from before,
            # whatever it is then
            e[4] = None
            total = bind(GRAD_ACCUMULATE, (e[1], g), {})
        elif e[2] is None or e[2] is _ZERO:
            total = g
        else:
            total = e[2] + g
        total.stop_gradient = True
        _write(e, total, reached.get(n))
        e[2], e[3] = total, True
    if not retain_graph:
        b.free_graph([loss])


install_training(Training(gradients=gradients, grad_of=grad_of, set_grad=set_grad,
                          backward=backward))
