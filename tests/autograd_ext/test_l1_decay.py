"""rt.regularizer.L1Decay: `coeff * sign(param)` joins each gradient before the update, in
every optimizer taking `weight_decay`, eagerly and in a converted training step."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

W0 = np.array([[0.5, -1.5], [2.0, -0.25], [-0.75, 1.0]])
G = np.array([[0.1, 0.2], [-0.3, 0.05], [0.0, -0.4]])


def _step(opt_cls, weight_decay, steps=3, **kw):
    w = rt.Parameter(W0.copy())
    opt = opt_cls(learning_rate=0.1, parameters=[w], weight_decay=weight_decay, **kw)
    for _ in range(steps):
        w.grad = rt.to_tensor(G)
        opt.step()
    return w.numpy()


def test_sgd_matches_numpy():
    w = W0.copy()
    for _ in range(3):
        w = w - 0.1 * (G + 0.05 * np.sign(w))
    np.testing.assert_allclose(_step(rt.optimizer.SGD, rt.regularizer.L1Decay(0.05)), w,
                               rtol=1e-12)


def test_adam_matches_numpy():
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, 4):
        g = G + 0.05 * np.sign(w)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        lr = 0.1 * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr * m / (np.sqrt(v) + eps * np.sqrt(1 - b2 ** t))
    # (the runtime keeps beta2**t in float32: 1 - 0.999 is off by 1e-5 relative)
    np.testing.assert_allclose(_step(rt.optimizer.Adam, rt.regularizer.L1Decay(0.05)), w,
                               rtol=0, atol=1e-5)


@pytest.mark.parametrize("opt_cls", [rt.optimizer.SGD, rt.optimizer.Momentum,
                                     rt.optimizer.Adam, rt.optimizer.RMSProp,
                                     rt.optimizer.Adagrad, rt.optimizer.Adamax])
def test_every_optimizer_adds_the_l1_term_to_the_gradient(opt_cls):
    """Each optimizer with L1Decay(c) takes the steps it takes without decay on a gradient
    of G + c * sign(w) (the sign of the weights before each step)."""
    got = _step(opt_cls, rt.regularizer.L1Decay(0.05))
    w = rt.Parameter(W0.copy())
    opt = opt_cls(learning_rate=0.1, parameters=[w])
    for _ in range(3):
        w.grad = rt.to_tensor(G + 0.05 * np.sign(w.numpy()))
        opt.step()
    np.testing.assert_allclose(got, w.numpy(), rtol=1e-12)
    assert not np.allclose(got, _step(opt_cls, None))  # the decay changed the result


def test_param_attr_l1_decay_wins_over_the_optimizer_l2():
    fc = nn.Linear(3, 2, weight_attr=rt.ParamAttr(regularizer=rt.regularizer.L1Decay(0.5)))
    w0 = fc.weight.numpy().astype(np.float64)
    opt = rt.optimizer.SGD(0.1, parameters=fc.parameters(),
                           weight_decay=rt.regularizer.L2Decay(0.2))
    fc.weight.grad = rt.zeros([3, 2])
    fc.bias.grad = rt.zeros([2])
    b0 = fc.bias.numpy().astype(np.float64)
    opt.step()
    np.testing.assert_allclose(fc.weight.numpy(), w0 - 0.1 * 0.5 * np.sign(w0), rtol=1e-6)
    np.testing.assert_allclose(fc.bias.numpy(), b0 - 0.1 * 0.2 * b0, rtol=1e-6)


def test_converted_training_step_matches_eager():
    def run(convert):
        rt.seed(0)
        fc = nn.Linear(3, 2)
        opt = rt.optimizer.Momentum(0.1, parameters=fc.parameters(),
                                    weight_decay=rt.regularizer.L1Decay(0.03))

        def step(x, y):
            loss = ((fc(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss

        step = d2s.to_static(step) if convert else step
        rng = np.random.default_rng(1)
        for _ in range(3):
            x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
            step(rt.to_tensor(x, "float32"), rt.to_tensor(y, "float32"))
        return fc.weight.numpy(), fc.bias.numpy()

    eager, static = run(False), run(True)
    assert len(eager) == len(static)
    for a, b in zip(eager, static):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_negative_coefficients_and_unknown_regularizers_are_refused():
    with pytest.raises(ValueError, match=r"L1Decay: coeff must be >= 0, got -1"):
        rt.regularizer.L1Decay(-1)
    with pytest.raises(TypeError, match=r"weight_decay must be a float, rt.regularizer.L2Decay "
                                        r"or rt.regularizer.L1Decay, got str"):
        rt.optimizer.SGD(0.1, parameters=[rt.Parameter(W0)], weight_decay="l1")
