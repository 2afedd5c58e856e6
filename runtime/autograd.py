"""Tape-based reverse-mode autograd for eager mode.

Each op output that needs a gradient points to a `Node`: the op, its inputs (strong
references, so the graph lives as long as its outputs), its attrs, and the output arrays.
`backward` walks the nodes in reverse topological order and applies each op's registered
gradient rule. The rules are written with ops, so with `create_graph=True` they are recorded
too and can be differentiated again.
"""
from __future__ import annotations

import functools
import weakref

from . import backend, core, dtypes
from .autograd_pylayer import PyLayer, PyLayerContext  # noqa: F401  (rt.autograd.PyLayer)
from .ops import creation, registry
from .ops.registry import STATE
from .ops.spectral import COMPLEX_NP, check_complex_grad
from .tensor import Tensor, wrap


def ones_like(t):
    return wrap(backend.XP.ones_like(t._data))


def zeros_like(t):
    return wrap(backend.XP.zeros_like(t._data))


class Node:
    """One recorded op application. Built for every recorded op, so kept cheap."""

    __slots__ = ("attrs", "backward_fn", "inputs", "op", "out_data", "out_refs", "versions")

    def __init__(self, op, inputs, attrs, outputs, backward_fn=None):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        if len(outputs) == 1:
            o = outputs[0]
            self.out_refs = (_weakref(o),)
            self.out_data = (o._data,)
        else:
            self.out_refs = tuple([_weakref(o) for o in outputs])
            self.out_data = tuple([o._data for o in outputs])
        # A custom rule (e.g. a whole static program run as one op) instead of op.grad
        self.backward_fn = backward_fn
        # An input changed in place after this op used it would give a wrong gradient. Almost
        # always every version is 0, recorded as None (cheap); see _check_versions.
        self.versions = None
        for x in inputs:
            if x.__class__ in _TENSOR_CLASSES and x._version:
                self.versions = tuple(t._version if isinstance(t, Tensor) else 0 for t in inputs)
                break

    def outputs(self):
        """The output tensors; an output that was dropped is rebuilt (it carries no grad)."""
        out = []
        for ref, data in zip(self.out_refs, self.out_data):
            t = ref()
            out.append(t if t is not None else wrap(data))
        return out


_weakref = weakref.ref
_TENSOR_CLASSES = registry._TENSOR_CLASSES
_FLOAT_NP = dtypes.NP_FLOATS  # (grows when bfloat16 loads)


def record(op, inputs, attrs, outputs, backward_fn=None):
    node = Node(op, inputs, attrs, outputs, backward_fn)
    for i, o in enumerate(outputs):
        dtype = o._data.dtype
        if dtype in _FLOAT_NP or dtype in COMPLEX_NP and (backward_fn is not None
                                                            or check_complex_grad(op.name)):
            o.stop_gradient = False  # (integer and bool outputs carry no gradient)
            o._node = node
            o._index = i


core.install(record=record)


class no_grad:
    """Disable gradient recording, as a context manager or a decorator.

    >>> import runtime as rt
    >>> with rt.no_grad():
    ...     y = rt.ones([2]) * 2
    """

    _value = False

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._value
        b = STATE.builder  # building a program: ops built in this region stop gradients
        self._builder = b
        if b is not None:
            self._prev_builder = b.grad_enabled
            b.grad_enabled = self._value
        return self

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev
        if self._builder is not None:
            self._builder.grad_enabled = self._prev_builder
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class enable_grad(no_grad):
    _value = True


class set_grad_enabled(no_grad):
    """Turn gradient recording on or off: at once when called (as PyTorch's), and back to
    what it was when used as a context manager or decorator (as Paddle's) exits.

    >>> import runtime as rt
    >>> x = rt.ones([2])
    >>> x.stop_gradient = False
    >>> with rt.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.stop_gradient, rt.is_grad_enabled()
    (True, True)
    """

    def __init__(self, mode: bool):
        self._value = bool(mode)
        super().__enter__()

    def __enter__(self):
        return self

    def __call__(self, fn):
        self.__exit__()  # as a decorator: switched only while `fn` runs
        mode = self._value

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


def _static_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """`grad` while a program is being built: the backward ops are appended to the program
    (Paddle's converted code does the same), with eager `grad`'s results and errors; without
    `retain_graph` the graph behind `outputs` is freed, as eagerly. The active builder
    (`STATE.builder`, the static layer above this one) appends them."""
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if grad_outputs is not None and not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    if grad_outputs is not None:  # None entries: ones, as in eager
        grad_outputs = [g if g is not None else creation.ones_like(o)
                        for g, o in zip(grad_outputs, outputs)]
    STATE.builder.check_not_freed(outputs, RuntimeError(FREED))
    prev, STATE.create_graph = STATE.create_graph, create_graph
    try:
        grads = STATE.builder.gradients(outputs, inputs, target_gradients=grad_outputs,
                                        allow_unused=allow_unused)
    finally:
        STATE.create_graph = prev
    if not (create_graph if retain_graph is None else retain_graph):
        STATE.builder.free_graph(outputs)
    result = []
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"grad: input {i} (shape {list(t.shape)}) is not used to compute the outputs; "
                "pass allow_unused=True to get None for it")
        if g is not None and not create_graph:
            g.stop_gradient = True  # as eager: without create_graph the result is a constant
        result.append(g)
    return result


def _tensor_inputs(node):
    """(slot, position-in-list or None, tensor) for every tensor input of a node."""
    for slot, x in enumerate(node.inputs):
        if isinstance(x, Tensor):
            yield slot, None, x
        elif isinstance(x, (list, tuple)):
            for j, t in enumerate(x):
                if isinstance(t, Tensor):
                    yield slot, j, t


FREED = ("backward through a graph that was already freed: the first backward() freed it. "
         "Pass retain_graph=True to the first backward() to call it again.")


def _walk_partial(node, stack, seen, order) -> None:
    """Push the graphs of the inputs of `node` (one whose backward_fn frees it part by part:
    a converted call's, all its outputs as one node) onto `_toposort`'s stack. An input
    whose graph a backward freed is ordered as it is: a backward that brings it a gradient
    raises (`run_backward`), one that reaches only outputs computed apart from it runs, as
    eagerly, where that input is not in the graph of those outputs at all."""
    for _, _, t in _tensor_inputs(node):
        n = t._node
        if n is None or id(n) in seen:
            continue
        if n.inputs is None:
            seen.add(id(n))
            order.append(n)
        else:
            stack.append((n, False))


def _toposort(roots):
    order, seen = [], set()
    stack = [(r._node, False) for r in roots if r._node is not None]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.inputs is None:
            raise RuntimeError(FREED)
        stack.append((node, True))
        fn = node.backward_fn
        if fn is not None and hasattr(fn, "release"):
            # a node freed part by part (`release`): its inputs' graphs are walked for the
            # outputs a backward reaches, which only running it tells (`_walk_partial`)
            _walk_partial(node, stack, seen, order)
            continue
        for _, _, t in _tensor_inputs(node):
            if t._node is not None and id(t._node) not in seen:
                stack.append((t._node, False))
    order.reverse()
    return order


def _accumulate(store, key, g):
    prev = store.get(key)
    store[key] = g if prev is None else prev + g


def _run_hooks(t, g):
    if t._hooks:
        for h in t._hooks:
            r = h(g)
            if r is not None:
                g = r
    return g


def run_backward(roots, root_grads, *, retain_graph=False, create_graph=False, capture=None):
    """The engine behind `Tensor.backward` and `rt.grad`.

    With `capture` (a list of tensors) the gradients of those tensors are returned instead of
    accumulated into `.grad` of leaves.
    """
    grads, leaves = _seed(roots, root_grads)
    captured = {}
    capture_keys = {}
    if capture is not None:
        for i, t in enumerate(capture):
            k = (id(t._node), t._index) if t._node is not None else ("leaf", id(t))
            capture_keys.setdefault(k, []).append(i)
    order = _toposort(roots)
    prev = STATE.grad_enabled, STATE.create_graph
    STATE.grad_enabled = STATE.create_graph = create_graph
    try:
        for node in order:
            outs = node.outputs()
            out_grads = []
            for i, o in enumerate(outs):
                g = grads.pop((id(node), i), None)
                if g is not None:
                    g = _run_hooks(o, g)
                    for ci in capture_keys.get((id(node), i), ()):
                        captured[ci] = g
                out_grads.append(g)
            if all(g is None for g in out_grads):
                continue
            if node.inputs is None:  # (reached through a node freed part by part)
                raise RuntimeError(FREED)
            in_grads = _input_grads(node, outs, out_grads)
            for slot, j, t in _tensor_inputs(node):
                if t.stop_gradient:
                    continue
                g = in_grads[slot]
                if j is not None and g is not None:
                    g = g[j]
                if g is None:
                    continue
                if t._node is not None:
                    _accumulate(grads, (id(t._node), t._index), g)
                else:
                    _leaf_add(leaves, t, g)
            if not retain_graph:  # free what the node holds for its gradient; a backward_fn
                # with `release` (a converted call's) frees only the part of its graph that
                # these gradients went through, and says whether that was the whole of it
                fn = node.backward_fn
                if fn is None or not hasattr(fn, "release") or fn.release(out_grads):
                    node.inputs = None
                    node.backward_fn = None
    finally:
        STATE.grad_enabled, STATE.create_graph = prev
    for t, g in leaves.values():
        g = _run_hooks(t, g)
        for ci in capture_keys.get(("leaf", id(t)), ()):
            captured[ci] = g
        if capture is None:
            if not create_graph:
                g = g.detach()
            t._grad = g if t._grad is None else t._grad + g
    return captured


def _seed(roots, root_grads):
    """(gradients by (node id, output index), gradients of leaves by id): the roots' given
    gradients (ones where None), after checking that each root can have one."""
    grads: dict = {}
    leaves: dict = {}
    for r, g in zip(roots, root_grads):
        if not r.dtype.is_floating:
            raise TypeError(f"backward() needs a floating-point tensor, got {r.dtype.name} "
                            "(integer and bool results carry no gradient)")
        if r.stop_gradient:
            raise RuntimeError(
                "backward() on a tensor with stop_gradient=True: nothing it depends on needs a "
                "gradient. Set stop_gradient=False on the inputs you want gradients for.")
        if g is None:
            g = ones_like(r)
        elif not isinstance(g, Tensor):
            g = wrap(backend.XP.asarray(g, dtype=r._data.dtype))
        if r._node is None:
            _leaf_add(leaves, r, g)
        else:
            _accumulate(grads, (id(r._node), r._index), g)
    return grads, leaves


def _input_grads(node, outs, out_grads) -> list:
    """The gradients of `node`'s input slots, from those of its outputs (None where unknown),
    by its custom backward or its op's gradient rule."""
    _check_versions(node)
    if node.backward_fn is not None:
        # A custom backward (a static program's) reads gradients of its outputs' dtypes; a
        # consumer that widened an output (float32 + float64) gave a wider one.
        out_grads = [g.astype(o.dtype) if g is not None and o is not None
                     and g.dtype != o.dtype else g for g, o in zip(out_grads, outs)]
        return node.backward_fn(node, out_grads)
    if node.op.grad is None:
        raise RuntimeError(f"op '{node.op.name}' has no gradient rule")
    if len(outs) > 1:  # rules of multi-output ops see a zero grad, never None
        out_grads = [g if g is not None else zeros_like(o) for g, o in zip(out_grads, outs)]
    return node.op.grad(list(node.inputs), outs, out_grads, node.attrs)


def _check_versions(node):
    versions = node.versions or (0,) * len(node.inputs)
    for x, v in zip(node.inputs, versions):
        if isinstance(x, Tensor) and x._version != v:
            raise RuntimeError(
                f"an input of '{node.op.name}' (shape {x.shape}) was modified in place "
                f"(setitem or set_value) after '{node.op.name}' used it, so its gradient "
                "cannot be computed. Assign into a clone() of the tensor instead.")


def _leaf_add(leaves, t, g):
    prev = leaves.get(id(t))
    leaves[id(t)] = (t, g if prev is None else prev[1] + g)


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Accumulate d(tensors)/d(leaf) into every leaf's `.grad`."""
    grad_tensors = grad_tensors or [None] * len(tensors)
    run_backward(list(tensors), list(grad_tensors), retain_graph=retain_graph)


core.install(backward=backward)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """Return d(outputs)/d(inputs) without touching `.grad`.

    >>> import runtime as rt
    >>> x = rt.to_tensor(0.5, stop_gradient=False)
    >>> (dx,) = rt.grad(rt.tanh(x), x, create_graph=True)
    >>> (ddx,) = rt.grad(dx, x)
    """
    if STATE.builder is not None:  # inside a program being built (converted code)
        return _static_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                            allow_unused)
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if retain_graph is None:
        retain_graph = create_graph
    got = run_backward(outputs, list(grad_outputs), retain_graph=retain_graph,
                       create_graph=create_graph, capture=inputs)
    result = []
    for i, t in enumerate(inputs):
        g = got.get(i)
        if g is None and not allow_unused:
            raise RuntimeError(
                f"grad: input {i} (shape {t.shape}) is not used to compute the outputs; pass "
                "allow_unused=True to get None for it")
        result.append(g)
    return result
