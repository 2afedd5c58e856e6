"""`PyLayer`: an op whose forward and backward the user writes (Paddle's
`paddle.autograd.PyLayer`, PyTorch's `torch.autograd.Function`).

`apply` runs the user's `forward` with gradients off, then joins its inputs to its outputs with
one `pylayer` op: the op passes the forward's values through, and its gradient rule calls the
user's `backward`. The same op serves both modes:

- eager: the tape records one node whose backward calls `backward` on Tensors (gradients the
  engine did not compute arrive as None when `ctx.set_materialize_grads(False)`);
- converted code (where d2s converts `forward` and `backward` like other called functions):
  the forward's ops are appended to the program without gradients, then the
  `pylayer` op; `append_backward` calls its rule on Variables, so `backward` is traced into the
  backward program (there, missing gradients of a multi-output layer arrive as zeros). The op
  names its context by a plain-data id, so the program can be saved for inference.

A `backward` computed outside runtime ops (through `.numpy()`) gives a gradient that is a
constant; asking for a second-order gradient through it raises instead of returning zero.
"""
from __future__ import annotations

import itertools

from . import core
from .ops.creation import zeros_like
from .ops.registry import STATE, Meta, bind, register
from .tensor import Tensor, wrap

# The contexts of PyLayers traced into programs, by the plain-data id their op carries (so a
# program holding one can be saved: a loaded program passes the values through). One entry
# per PyLayer call per trace, as many as the programs traced.
_STATIC_CONTEXTS: dict = {}
_CONTEXT_IDS = itertools.count()


class PyLayerContext:
    """The `ctx` passed to `forward` and `backward`: tensors saved for backward and flags.
    Attributes set on it in `forward` are read back in `backward`."""

    def __init__(self, layer: type):
        self._layer = layer
        self._saved: tuple = ()
        self._non_differentiable: list = []
        self.materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        """Keep `tensors` for `backward` (read them with `saved_tensor()`)."""
        self._saved = tensors

    def saved_tensor(self) -> tuple:
        """The tensors given to `save_for_backward`, in order."""
        return self._saved

    def mark_non_differentiable(self, *tensors) -> None:
        """Mark outputs of `forward` that carry no gradient: `apply` returns them with
        `stop_gradient=True`, and `backward` gets a zero (or None) gradient for them."""
        self._non_differentiable.extend(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """With False, `backward` gets None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def __repr__(self):
        return f"<{self._layer.__name__} context>"


class PyLayer:
    """Subclass with `forward(ctx, *args)` and `backward(ctx, *grads)` as staticmethods, then
    call `apply`. `backward` returns one gradient (or None) per tensor argument of `forward`.

    >>> import runtime as rt
    >>> class Cube(rt.autograd.PyLayer):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, dy):
    ...         (x,) = ctx.saved_tensor()
    ...         return dy * 3 * x ** 2
    >>> x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a PyLayer subclass defines forward(ctx, ...) as a staticmethod")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("a PyLayer subclass defines backward(ctx, ...) as a "
                                  "staticmethod")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = PyLayerContext(cls)
        inputs = [a for a in (*args, *kwargs.values()) if core.is_tensor(a)]
        with _grad_off():
            result = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(result, (tuple, list))
        leaves = [result] if single else list(result)
        slots = [i for i, v in enumerate(leaves) if core.is_tensor(v)]
        outs = [leaves[i] for i in slots]
        frozen = {i for i, t in enumerate(outs) if id(t) in ctx._non_differentiable}
        if STATE.builder is not None:
            key = next(_CONTEXT_IDS)
            _STATIC_CONTEXTS[key] = ctx
            joined = bind(PYLAYER, (inputs, outs), {"layer": cls.__name__, "ctx_id": key})
            joined = joined if isinstance(joined, tuple) else (joined,)
            for i in frozen:
                joined[i].stop_gradient = True
        else:
            joined = _join_eager(ctx, inputs, outs, frozen)
        for i, t in zip(slots, joined):
            leaves[i] = t
        return leaves[0] if single else type(result)(leaves)


class _grad_off:
    """`no_grad` for the forward (autograd.py imports this module, so it cannot be used)."""

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = False
        self._builder = STATE.builder
        if self._builder is not None:
            self._prev_builder = self._builder.grad_enabled
            self._builder.grad_enabled = False

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev
        if self._builder is not None:
            self._builder.grad_enabled = self._prev_builder


def _join_eager(ctx, inputs, outs, frozen):
    joined = [wrap(t._data) for t in outs]
    if STATE.grad_enabled and any(not t.stop_gradient for t in inputs):
        recorded = [t for i, t in enumerate(joined) if i not in frozen]
        if recorded:
            core.record(PYLAYER, (inputs, outs), {"ctx": ctx}, tuple(joined),
                        backward_fn=_eager_backward)
            for i in frozen:  # (recorded outputs share the node; these do not)
                joined[i].stop_gradient = True
                joined[i]._node = None
    return joined


def _eager_backward(node, out_grads):
    inputs, outs = node.inputs
    ctx = node.attrs["ctx"]
    grads = _call_backward(ctx, inputs, outs, out_grads)
    if STATE.grad_enabled:  # create_graph: the grads are differentiated again
        sources = [t for t in (*inputs, *ctx._saved) if core.is_tensor(t) and not t.stop_gradient]
        grads = [_refuse_second_order(node, t, g, sources) for t, g in zip(inputs, grads)]
    return [grads, None]


def _pylayer_grad(inputs, outputs, grads, attrs):
    ins, outs = inputs
    ctx = _STATIC_CONTEXTS.get(attrs["ctx_id"])
    if ctx is None:
        raise RuntimeError(
            f"PyLayer {attrs['layer']}: its backward is Python code, which a program loaded "
            "from a file does not hold; differentiate the model built from the class instead")
    builder = STATE.builder
    if builder is not None:  # the backward may be built in a copy of the forward's program
        ctx._saved = tuple(_in_program(builder, t) for t in ctx._saved)
    return [_call_backward(ctx, ins, outs, list(grads)), None]


def _in_program(builder, t):
    """The value of the program being built that stands for the saved Variable `t`."""
    if not core.is_variable(t) or t.block.program is builder.program:
        return t
    return builder.block.var(t.name)


def _call_backward(ctx, inputs, outs, out_grads):
    name = ctx._layer.__name__
    if ctx.materialize_grads:
        out_grads = [g if g is not None else zeros_like(o) for g, o in zip(out_grads, outs)]
    result = ctx._layer.backward(ctx, *out_grads)
    grads = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(grads) != len(inputs):
        raise ValueError(
            f"{name}.backward returned {len(grads)} gradient(s), but forward took "
            f"{len(inputs)} tensor argument(s): return one gradient (or None) per tensor")
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is not None and list(g.shape) != list(t.shape) and -1 not in t.shape:
            raise ValueError(
                f"{name}.backward: gradient {i} has shape {list(g.shape)}, but the tensor "
                f"argument it belongs to has shape {list(t.shape)}")
    return grads


def _refuse_second_order(node, x, g, sources):
    """A gradient that does not depend on the forward's tensors (computed outside runtime ops)
    while `x` needs one: its own gradient would silently be missing, so it gets a node whose
    backward raises."""
    if g is None or x.stop_gradient or _reaches(g, sources, node):
        return g
    marked = wrap(g._data)
    core.record(PYLAYER_NOT_DIFFERENTIABLE, (x,), node.attrs, (marked,),
                backward_fn=_raise_second_order)
    return marked


def _reaches(g, sources, own) -> bool:
    """Whether the recorded graph of `g` reads any of `sources`, other than through the
    layer's own node `own` (an incoming gradient may read an output's shape)."""
    ids = {id(t) for t in sources}
    nodes = {id(t._node) for t in sources if t._node is not None}
    stack, seen = [g], {id(own)}
    while stack:
        t = stack.pop()
        if id(t) in ids or t._node is not None and id(t._node) in nodes:
            return True
        node = t._node
        if node is None or id(node) in seen or node.inputs is None:
            continue
        seen.add(id(node))
        for x in node.inputs:
            stack.extend(v for v in (x if isinstance(x, (list, tuple)) else (x,))
                         if isinstance(v, Tensor))
    return False


def _raise_second_order(node, out_grads):
    name = node.attrs["ctx"]._layer.__name__
    raise RuntimeError(
        f"{name}.backward is not differentiable: the gradient it returned is a constant (it "
        "is not computed with runtime ops from the saved tensors and incoming gradients, e.g. "
        "it went through .numpy()), so a second-order gradient through it cannot be taken. "
        "Write backward with runtime ops to differentiate it again.")


def _pass_through(xp, inputs, outs, **_):
    return tuple(outs) if len(outs) > 1 else outs[0]  # (one output is a value, not a tuple)


def _infer_pass_through(inputs, outs, **_):
    metas = tuple(Meta(o.shape, o.dtype) for o in outs)
    return metas if len(metas) > 1 else metas[0]


PYLAYER = register("pylayer", kernel=_pass_through, infer=_infer_pass_through,
                   grad=_pylayer_grad, amp="keep",
                   doc="The outputs of a PyLayer's forward; its gradient calls the backward.")
PYLAYER_NOT_DIFFERENTIABLE = register(
    "pylayer_not_differentiable", kernel=lambda xp, x, **_: x,
    infer=lambda x, **_: x, amp="keep",
    doc="Marks a constant PyLayer gradient: differentiating it again raises.")

__all__ = ["PyLayer", "PyLayerContext"]
