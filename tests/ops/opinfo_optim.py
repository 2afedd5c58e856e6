"""OpInfos for runtime/ops/optim.py: optimizer update rules (nondiff) and loss unscaling."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

from runtime.ops import optim


def _pos(rng, *shape):
    return rng.uniform(0.1, 1.0, size=shape)


def _lr(x):
    return float(x) if np.ndim(x) == 0 else x


def _sgd_ref(p, g, lr, weight_decay=0.0):
    return p - lr * (g + weight_decay * p)


def _momentum_ref(p, g, v, lr, momentum=0.9, use_nesterov=False, weight_decay=0.0):
    g = g + weight_decay * p
    v = momentum * v + g
    return p - lr * (g + momentum * v if use_nesterov else v), v


def _adam_ref(p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-8,
              weight_decay=0.0, decoupled=0.0):
    p = p * (1 - lr * decoupled)
    g = g + weight_decay * p
    m1 = beta1 * m1 + (1 - beta1) * g
    m2 = beta2 * m2 + (1 - beta2) * g * g
    step = lr * (m1 / (1 - b1p)) / (np.sqrt(m2 / (1 - b2p)) + epsilon)
    return p - step, m1, m2, b1p * beta1, b2p * beta2


def _adamw_ref(p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-8, coeff=0.01,
               lr_ratio=1.0):
    return _adam_ref(p, g, lr * lr_ratio, m1, m2, b1p, b2p, beta1, beta2, epsilon,
                     decoupled=coeff)


def _rmsprop_ref(p, g, lr, ms, mg, mom, rho=0.95, epsilon=1e-6, momentum=0.0, centered=False,
                 weight_decay=0.0):
    g = g + weight_decay * p
    ms = rho * ms + (1 - rho) * g * g
    if centered:
        mg = rho * mg + (1 - rho) * g
    denom = np.sqrt(ms - mg * mg + epsilon) if centered else np.sqrt(ms + epsilon)
    mom = momentum * mom + lr * g / denom
    return p - mom, ms, mg, mom


def _unscale_fn(xs, scale):
    outs, found = optim.check_finite_and_unscale(xs, scale)
    return (*outs, found)


def _unscale_ref(xs, scale):
    finite = all(np.isfinite(x).all() for x in xs)
    return (*[x / scale for x in xs], np.asarray(not finite))


def _shape_error(fn, name, *extra):
    return ErrorSample((np.ones(2), np.ones(3), 0.1, *extra), {}, ValueError,
                       rf"{name}: param has shape \[2\] but grad has shape \[3\]")


OPINFOS = [
    OpInfo("sgd_update", optim.sgd_update, _sgd_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.1)),
               Sample((randn(rng, 5), randn(rng, 5), np.asarray(0.05)), {"weight_decay": 0.1}),
               Sample((randn(rng), randn(rng), 0.3))],
           error_samples=[_shape_error(optim.sgd_update, "sgd_update")]),
    OpInfo("momentum_update", optim.momentum_update, _momentum_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 3, 4), 0.1)),
               Sample((randn(rng, 6), randn(rng, 6), randn(rng, 6), np.asarray(0.02)),
                      {"momentum": 0.5, "use_nesterov": True, "weight_decay": 0.01})]),
    OpInfo("adam_update", optim.adam_update, _adam_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.01, randn(rng, 3, 4),
                       _pos(rng, 3, 4), np.asarray(0.9), np.asarray(0.999))),
               Sample((randn(rng, 5), randn(rng, 5), np.asarray(0.1), randn(rng, 5),
                       _pos(rng, 5), np.asarray(0.25), np.asarray(0.81)),
                      {"beta1": 0.5, "beta2": 0.9, "epsilon": 1e-3, "weight_decay": 0.2})]),
    OpInfo("adamw_update", optim.adamw_update, _adamw_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.01, randn(rng, 3, 4),
                       _pos(rng, 3, 4), np.asarray(0.9), np.asarray(0.999)), {"coeff": 0.3}),
               Sample((randn(rng, 5), randn(rng, 5), np.asarray(0.1), randn(rng, 5),
                       _pos(rng, 5), np.asarray(0.729), np.asarray(0.997)),
                      {"lr_ratio": 0.5})]),
    OpInfo("rmsprop_update", optim.rmsprop_update, _rmsprop_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.01, _pos(rng, 3, 4),
                       np.zeros((3, 4)), randn(rng, 3, 4))),
               Sample((randn(rng, 5), randn(rng, 5), np.asarray(0.05), _pos(rng, 5) + 1,
                       randn(rng, 5) * 0.1, randn(rng, 5)),
                      {"rho": 0.9, "momentum": 0.5, "centered": True, "weight_decay": 0.1})]),
    OpInfo("check_finite_and_unscale", _unscale_fn, _unscale_ref, grad=False,
           samples=lambda rng: [
               Sample(([randn(rng, 3, 4), randn(rng, 5)], 1024.0)),
               Sample(([randn(rng, 2), np.array([1.0, np.inf])], 8.0)),
               Sample(([np.array([np.nan, 1.0])], 2.0))]),
]
