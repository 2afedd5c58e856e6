"""The optimizers: SGD, Momentum, Adam, AdamW, RMSProp (Paddle 2.x signatures and defaults).

Each is its state list plus one call to its update op; everything else is in `Optimizer`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ops import optim as U
from ..ops.registry import STATE
from . import static_update
from .lr import LRScheduler
from .optimizer import Optimizer


class SGD(Optimizer):
    """`param -= lr * (grad + weight_decay * param)`.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.SGD(learning_rate=0.1, parameters=[w], weight_decay=0.01)
    """

    def __init__(self, learning_rate: float | LRScheduler = 0.001,
                 parameters: Iterable | None = None, weight_decay=None, grad_clip=None,
                 multi_precision: bool = False, name: str | None = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, multi_precision,
                         name)

    def _update(self, param, grad, lr, state):
        return U.sgd_update(param, grad, lr, self._decay(param)), {}


class Momentum(Optimizer):
    """`v = momentum * v + grad; param -= lr * v` (Nesterov: `lr * (grad + momentum * v)`).

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.Momentum(0.1, momentum=0.9, parameters=[w])
    """

    _states = (("velocity", None),)

    def __init__(self, learning_rate: float | LRScheduler = 0.001, momentum: float = 0.9,
                 parameters: Iterable | None = None, use_nesterov: bool = False,
                 weight_decay=None, grad_clip=None, multi_precision: bool = False,
                 name: str | None = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, multi_precision,
                         name)
        self._momentum = float(momentum)
        self._use_nesterov = bool(use_nesterov)

    def _update(self, param, grad, lr, state):
        p, v = U.momentum_update(param, grad, state["velocity"], lr, self._momentum,
                                 self._use_nesterov, self._decay(param))
        return p, {"velocity": v}


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Paddle's bias-corrected step size; `weight_decay` is L2
    regularisation added to the gradient.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.Adam(learning_rate=1e-3, parameters=[w])
    """

    _states = (("moment1", None), ("moment2", None), ("beta1_pow_acc", "beta1"),
               ("beta2_pow_acc", "beta2"))

    def __init__(self, learning_rate: float | LRScheduler = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8,
                 parameters: Iterable | None = None, weight_decay=None, grad_clip=None,
                 lazy_mode: bool = False, multi_precision: bool = False,
                 name: str | None = None):
        for arg, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{type(self).__name__}: {arg} must be in [0, 1), got {value}")
        if epsilon < 0:
            raise ValueError(f"{type(self).__name__}: epsilon must be >= 0, got {epsilon}")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, multi_precision,
                         name)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)
        # beta powers start at beta (not 1): the first step already divides by 1 - beta
        self._states = tuple((k, getattr(self, "_" + v) if isinstance(v, str) else v)
                             for k, v in type(self)._states)

    def _moments(self, state):
        return (state["moment1"], state["moment2"], state["beta1_pow_acc"],
                state["beta2_pow_acc"])

    def _new_moments(self, outs):
        return dict(zip(("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc"), outs))

    def _update(self, param, grad, lr, state):
        if STATE.builder is not None and static_update.wanted(param, grad, state):
            p, *rest = static_update.adam(param, grad, lr, *self._moments(state), self._beta1,
                                          self._beta2, self._epsilon, self._decay(param))
            return p, self._new_moments(rest)
        p, *rest = U.adam_update(param, grad, lr, *self._moments(state), self._beta1,
                                 self._beta2, self._epsilon, self._decay(param))
        return p, self._new_moments(rest)


class AdamW(Adam):
    """Adam with decoupled weight decay: `param *= 1 - lr * weight_decay` before the Adam
    step (Loshchilov & Hutter). `apply_decay_param_fun(name) -> bool` selects the parameters
    that decay; `lr_ratio(param) -> float` scales the rate per parameter.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.AdamW(learning_rate=1e-3, parameters=[w], weight_decay=0.01)
    """

    def __init__(self, learning_rate: float | LRScheduler = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8,
                 parameters: Iterable | None = None, weight_decay: float = 0.01,
                 lr_ratio: Callable | None = None, apply_decay_param_fun: Callable | None = None,
                 grad_clip=None, lazy_mode: bool = False, multi_precision: bool = False,
                 name: str | None = None):
        if not isinstance(weight_decay, (int, float)):
            raise TypeError(f"AdamW: weight_decay must be a float coefficient, got "
                            f"{type(weight_decay).__name__}")
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip,
                         lazy_mode, multi_precision, name)
        self._coeff = float(weight_decay)
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun

    def _update(self, param, grad, lr, state):
        coeff = self._coeff
        if self._apply_decay_param_fun is not None and not self._apply_decay_param_fun(
                param.name):
            coeff = 0.0
        ratio = 1.0 if self._lr_ratio is None else float(self._lr_ratio(param))
        if STATE.builder is not None and static_update.wanted(param, grad, state):
            p, *rest = static_update.adam(param, grad, lr, *self._moments(state), self._beta1,
                                          self._beta2, self._epsilon, decay=coeff,
                                          lr_ratio=ratio)
            return p, self._new_moments(rest)
        p, *rest = U.adamw_update(param, grad, lr, *self._moments(state), self._beta1,
                                  self._beta2, self._epsilon, coeff, ratio)
        return p, self._new_moments(rest)

    def _decay(self, param) -> float:
        return 0.0


class RMSProp(Optimizer):
    """RMSProp: divide the gradient by a running root mean square (optionally centered, with
    momentum), Paddle's defaults `rho=0.95, epsilon=1e-6`.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.RMSProp(learning_rate=0.01, parameters=[w])
    """

    _states = (("mean_square", None), ("mean_grad", None), ("momentum", None))

    def __init__(self, learning_rate: float | LRScheduler, rho: float = 0.95,
                 epsilon: float = 1e-6, momentum: float = 0.0, centered: bool = False,
                 parameters: Iterable | None = None, weight_decay=None, grad_clip=None,
                 name: str | None = None):
        if not 0.0 <= rho < 1.0:
            raise ValueError(f"RMSProp: rho must be in [0, 1), got {rho}")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, False, name)
        self._rho, self._epsilon = float(rho), float(epsilon)
        self._momentum, self._centered = float(momentum), bool(centered)

    def _update(self, param, grad, lr, state):
        p, ms, mg, mom = U.rmsprop_update(
            param, grad, lr, state["mean_square"], state["mean_grad"], state["momentum"],
            self._rho, self._epsilon, self._momentum, self._centered, self._decay(param))
        return p, {"mean_square": ms, "mean_grad": mg, "momentum": mom}


__all__ = ["SGD", "Adam", "AdamW", "Momentum", "RMSProp"]
