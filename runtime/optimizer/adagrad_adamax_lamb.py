"""Adagrad, Adamax and Lamb (Paddle 2.x signatures and defaults), each its state list plus one
call to its update op (`runtime/ops/optim_adagrad_adamax_lamb.py`)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ops import optim_adagrad_adamax_lamb as U
from .lr import LRScheduler
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """`moment += grad**2; param -= lr * grad / (sqrt(moment) + epsilon)`.

    The state `moment` holds the sum of squared gradients; `initial_accumulator_value` is
    added to it in the denominator (Paddle stores the two summed: a checkpoint's `moment_0`
    differs from Paddle's by that constant).

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.Adagrad(learning_rate=0.1, parameters=[w])
    """

    _states = (("moment", None),)

    def __init__(self, learning_rate: float | LRScheduler, epsilon: float = 1e-6,
                 parameters: Iterable | None = None, weight_decay=None, grad_clip=None,
                 name: str | None = None, initial_accumulator_value: float = 0.0):
        if initial_accumulator_value < 0:
            raise ValueError("Adagrad: initial_accumulator_value must be >= 0, got "
                             f"{initial_accumulator_value}")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, False, name)
        self._epsilon = float(epsilon)
        self._initial = float(initial_accumulator_value)

    def _update(self, param, grad, lr, state):
        p, moment = U.adagrad_update(param, grad, lr, state["moment"], self._epsilon,
                                     self._initial, self._decay(param))
        return p, {"moment": moment}


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm, `inf_norm = max(beta2 * inf_norm + epsilon,
    |grad|)`, `param -= lr / (1 - beta1**t) * moment / inf_norm`.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.Adamax(learning_rate=0.01, parameters=[w])
    """

    def __init__(self, learning_rate: float | LRScheduler = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8,
                 parameters: Iterable | None = None, weight_decay=None, grad_clip=None,
                 name: str | None = None):
        for arg, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"Adamax: {arg} must be in [0, 1), got {value}")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, False, name)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)
        self._states = (("moment", None), ("inf_norm", None), ("beta1_pow_acc", self._beta1))

    def _update(self, param, grad, lr, state):
        p, m, u, b1p = U.adamax_update(param, grad, lr, state["moment"], state["inf_norm"],
                                       state["beta1_pow_acc"], self._beta1, self._beta2,
                                       self._epsilon, self._decay(param))
        return p, {"moment": m, "inf_norm": u, "beta1_pow_acc": b1p}


class Lamb(Optimizer):
    """LAMB (You et al.): the Adam direction plus `lamb_weight_decay * param`, scaled by the
    trust ratio `|param| / |direction|`. `exclude_from_weight_decay_fn(param) -> bool` turns
    the decay off per parameter.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.ones([3]).numpy())
    >>> opt = rt.optimizer.Lamb(learning_rate=0.01, parameters=[w])
    """

    def __init__(self, learning_rate: float | LRScheduler = 0.001,
                 lamb_weight_decay: float = 0.01, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, parameters: Iterable | None = None, grad_clip=None,
                 exclude_from_weight_decay_fn: Callable | None = None,
                 multi_precision: bool = False, always_adapt: bool = False,
                 name: str | None = None):
        if always_adapt:
            raise NotImplementedError("Lamb: always_adapt=True is not provided (the trust "
                                      "ratio applies to every parameter with a decay)")
        super().__init__(learning_rate, parameters, None, grad_clip, multi_precision, name)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)
        self._coeff = float(lamb_weight_decay)
        self._exclude = exclude_from_weight_decay_fn
        self._states = (("moment1", None), ("moment2", None), ("beta1_pow_acc", self._beta1),
                        ("beta2_pow_acc", self._beta2))

    def _update(self, param, grad, lr, state):
        coeff = 0.0 if self._exclude is not None and self._exclude(param) else self._coeff
        p, *rest = U.lamb_update(param, grad, lr, state["moment1"], state["moment2"],
                                 state["beta1_pow_acc"], state["beta2_pow_acc"], self._beta1,
                                 self._beta2, self._epsilon, coeff)
        return p, dict(zip(("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc"), rest))


__all__ = ["Adagrad", "Adamax", "Lamb"]
