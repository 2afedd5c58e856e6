"""`rt.static.gradients` and `rt.static.append_backward` called outside a program, on eager
Tensors: the same results computed with autograd (`rt.grad`), so code written for static mode
runs unchanged in eager mode (Paddle users call them from helpers used in both modes)."""
from __future__ import annotations

from ..autograd import grad
from ..parameter import Parameter
from ..tensor import Tensor


def gradients(targets, inputs, target_gradients=None, no_grad_set=None) -> list:
    """d(sum of targets)/d(inputs) now; None for an input the targets do not depend on."""
    _refuse_no_grad_set("gradients", no_grad_set)
    targets = [targets] if not isinstance(targets, (list, tuple)) else list(targets)
    single = not isinstance(inputs, (list, tuple))
    inputs = [inputs] if single else list(inputs)
    if target_gradients is not None and not isinstance(target_gradients, (list, tuple)):
        target_gradients = [target_gradients]
    return list(grad(targets, inputs, grad_outputs=target_gradients, retain_graph=True,
                     allow_unused=True))


def append_backward(loss, parameter_list=None, no_grad_set=None) -> list:
    """`[(param, grad)]` for every trainable Parameter `loss` depends on (or
    `parameter_list`), in the order autograd reaches them; `.grad` is left untouched."""
    _refuse_no_grad_set("append_backward", no_grad_set)
    params = list(parameter_list) if parameter_list is not None else _leaves(loss)
    if not params:
        return []
    grads = gradients([loss], params)
    return [(p, g) for p, g in zip(params, grads) if g is not None]


def _refuse_no_grad_set(fn, no_grad_set):
    if no_grad_set:
        raise NotImplementedError(
            f"rt.static.{fn}: no_grad_set is only supported while building a program; in "
            "eager mode set stop_gradient=True on those tensors instead")


def _leaves(t) -> list:
    """The trainable Parameters (stop_gradient=False, no producer) behind `t`."""
    found, seen, stack = [], set(), [t]
    while stack:
        x = stack.pop()
        if not isinstance(x, Tensor) or id(x) in seen or x.stop_gradient:
            continue
        seen.add(id(x))
        node = x._node
        if node is None:
            if isinstance(x, Parameter):
                found.append(x)
            continue
        for i in reversed(node.inputs):
            if isinstance(i, (list, tuple)):
                stack.extend(reversed(i))
            else:
                stack.append(i)
    return found
