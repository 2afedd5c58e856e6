"""The Adagrad, Adamax and Lamb update rules (Paddle's adagrad, adamax and lamb ops); the
conventions of `optim.py` apply: nondiff, amp='keep', learning rate a float or a 0-d tensor,
outputs in the parameter's dtype."""
from __future__ import annotations

from .optim import _as, _check, _grad, _l2, _like
from .registry import bind, register


def _adagrad_kernel(xp, p, g, lr, moment, epsilon=1e-6, initial=0.0, weight_decay=0.0):
    g = _grad(p, g, weight_decay)
    moment = moment + g * g
    denom = xp.sqrt(moment + _as(initial, p.dtype)) if initial else xp.sqrt(moment)
    return p - _as(lr, p.dtype) * g / (denom + _as(epsilon, p.dtype)), moment


def _adagrad_infer(p, g, lr, moment, **_):
    _check("adagrad_update", p, g)
    return _like(p, moment)


ADAGRAD_UPDATE = register(
    "adagrad_update", kernel=_adagrad_kernel, infer=_adagrad_infer, amp="keep", nondiff=True,
    doc="moment += g*g; param -= lr * g / (sqrt(moment + initial) + epsilon)")


def adagrad_update(param, grad, learning_rate, moment, epsilon: float = 1e-6,
                   initial_accumulator_value: float = 0.0, weight_decay: float = 0.0):
    """One Adagrad step; returns (param, moment). `moment` holds the sum of squared
    gradients; `initial_accumulator_value` is added to it in the denominator."""
    attrs = {"epsilon": float(epsilon), **_l2(weight_decay)}
    if initial_accumulator_value:
        attrs["initial"] = float(initial_accumulator_value)
    return bind(ADAGRAD_UPDATE, (param, grad, learning_rate, moment), attrs)


def _adamax_kernel(xp, p, g, lr, moment, inf_norm, b1p, beta1=0.9, beta2=0.999,
                   epsilon=1e-8, weight_decay=0.0):
    g = _grad(p, g, weight_decay)
    moment = beta1 * moment + (1.0 - beta1) * g
    inf_norm = xp.maximum(beta2 * inf_norm + _as(epsilon, p.dtype), xp.abs(g))
    lr_t = _as(lr / (1.0 - b1p), p.dtype)
    return p - lr_t * moment / inf_norm, moment, inf_norm, b1p * beta1


def _adamax_infer(p, g, lr, moment, inf_norm, b1p, **_):
    _check("adamax_update", p, g)
    return _like(p, moment, inf_norm, b1p)


ADAMAX_UPDATE = register(
    "adamax_update", kernel=_adamax_kernel, infer=_adamax_infer, amp="keep", nondiff=True,
    doc="Adamax (Adam with the infinity norm), Paddle's adamax op")


def adamax_update(param, grad, learning_rate, moment, inf_norm, beta1_pow,
                  beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                  weight_decay: float = 0.0):
    """One Adamax step; returns (param, moment, inf_norm, beta1_pow)."""
    attrs = {"beta1": float(beta1), "beta2": float(beta2), "epsilon": float(epsilon),
             **_l2(weight_decay)}
    return bind(ADAMAX_UPDATE, (param, grad, learning_rate, moment, inf_norm, beta1_pow), attrs)


def _lamb_kernel(xp, p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lamb_weight_decay=0.01):
    g = g.astype(p.dtype, copy=False)
    m1 = beta1 * m1 + (1.0 - beta1) * g
    m2 = beta2 * m2 + (1.0 - beta2) * (g * g)
    m_hat = m1 / _as(1.0 - b1p, p.dtype)
    v_hat = m2 / _as(1.0 - b2p, p.dtype)
    r = m_hat / (xp.sqrt(v_hat) + _as(epsilon, p.dtype)) + _as(lamb_weight_decay, p.dtype) * p
    p_norm = xp.sqrt(xp.sum(p * p))
    r_norm = xp.sqrt(xp.sum(r * r))
    trust = xp.where((p_norm > 0) & (r_norm > 0), p_norm / xp.where(r_norm > 0, r_norm, 1),
                     1.0).astype(p.dtype)
    return p - _as(lr, p.dtype) * trust * r, m1, m2, b1p * beta1, b2p * beta2


def _lamb_infer(p, g, lr, m1, m2, b1p, b2p, **_):
    _check("lamb_update", p, g)
    return _like(p, m1, m2, b1p, b2p)


LAMB_UPDATE = register(
    "lamb_update", kernel=_lamb_kernel, infer=_lamb_infer, amp="keep", nondiff=True,
    doc="LAMB: the Adam direction plus decay, scaled by the trust ratio |param| / |update|")


def lamb_update(param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow,
                beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-6,
                lamb_weight_decay: float = 0.01):
    """One LAMB step; returns (param, moment1, moment2, beta1_pow, beta2_pow)."""
    attrs = {"beta1": float(beta1), "beta2": float(beta2), "epsilon": float(epsilon),
             "lamb_weight_decay": float(lamb_weight_decay)}
    return bind(LAMB_UPDATE, (param, grad, learning_rate, moment1, moment2, beta1_pow,
                              beta2_pow), attrs)


METHODS: dict = {}
