"""OpInfos for runtime/ops/optim_adagrad_adamax_lamb.py: the Adagrad, Adamax and LAMB update
rules."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

from runtime.ops import optim_adagrad_adamax_lamb as rules


def _pos(rng, *shape):
    return rng.uniform(0.1, 1.0, size=shape)


def _adagrad_ref(p, g, lr, m, epsilon=1e-6, initial_accumulator_value=0.0, weight_decay=0.0):
    g = g + weight_decay * p
    m = m + g * g
    return p - lr * g / (np.sqrt(m + initial_accumulator_value) + epsilon), m


def _adamax_ref(p, g, lr, m, u, b1p, beta1=0.9, beta2=0.999, epsilon=1e-8, weight_decay=0.0):
    g = g + weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    u = np.maximum(beta2 * u + epsilon, np.abs(g))
    return p - lr / (1 - b1p) * m / u, m, u, b1p * beta1


def _lamb_ref(p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-6,
              lamb_weight_decay=0.01):
    m1 = beta1 * m1 + (1 - beta1) * g
    m2 = beta2 * m2 + (1 - beta2) * g * g
    r = (m1 / (1 - b1p)) / (np.sqrt(m2 / (1 - b2p)) + epsilon) + lamb_weight_decay * p
    pn, rn = np.linalg.norm(p), np.linalg.norm(r)
    trust = pn / rn if pn > 0 and rn > 0 else 1.0
    return p - lr * trust * r, m1, m2, b1p * beta1, b2p * beta2


def _shape_error(name, *extra):
    return ErrorSample((np.ones(2), np.ones(3), 0.1, *extra), {}, ValueError,
                       rf"{name}: param has shape \[2\] but grad has shape \[3\]")


OPINFOS = [
    OpInfo("adagrad_update", rules.adagrad_update, _adagrad_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.1, _pos(rng, 3, 4))),
               Sample((randn(rng, 5), randn(rng, 5), np.asarray(0.05), _pos(rng, 5)),
                      {"initial_accumulator_value": 0.1, "weight_decay": 0.01})],
           error_samples=[_shape_error("adagrad_update", np.ones(2))]),
    OpInfo("adamax_update", rules.adamax_update, _adamax_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.1, randn(rng, 3, 4),
                       _pos(rng, 3, 4), np.asarray(0.9))),
               Sample((randn(rng, 5), randn(rng, 5), np.asarray(0.01), randn(rng, 5),
                       _pos(rng, 5), np.asarray(0.81)), {"beta1": 0.8, "weight_decay": 0.1})],
           error_samples=[_shape_error("adamax_update", np.ones(2), np.ones(2),
                                       np.asarray(0.9))]),
    OpInfo("lamb_update", rules.lamb_update, _lamb_ref, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), randn(rng, 3, 4), 0.1, randn(rng, 3, 4),
                       _pos(rng, 3, 4), np.asarray(0.9), np.asarray(0.999))),
               Sample((randn(rng, 6), randn(rng, 6), np.asarray(0.02), randn(rng, 6),
                       _pos(rng, 6), np.asarray(0.81), np.asarray(0.998)),
                      {"lamb_weight_decay": 0.0}),
               Sample((np.zeros(4), randn(rng, 4), 0.1, randn(rng, 4), _pos(rng, 4),
                       np.asarray(0.9), np.asarray(0.999)))],
           error_samples=[_shape_error("lamb_update", np.ones(2), np.ones(2),
                                       np.asarray(0.9), np.asarray(0.9))]),
]
