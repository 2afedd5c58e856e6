"""`p.detach()` of a tensor converted code reads by reference (a Parameter, a buffer, a
tensor held by the instance) is the value when the program runs (issue 33). It was the
array the tensor held when traced: an EMA written as `shadow * d + p.detach() * (1 - d)`
after `opt.step()` averaged the parameters from before the step of the first call, on every
call, silently; a `detach()` read of a bias changed between calls gave the old bias."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


class EMA:
    """timm's ModelEmaV2 shape: shadow tensors in a dict, updated after the step."""

    def __init__(self, model, decay=0.5):
        self.decay = decay
        self.shadow = {n: p.detach().clone() for n, p in model.named_parameters()}

    def update(self, model):
        with rt.no_grad():
            for n, p in model.named_parameters():
                self.shadow[n] = self.shadow[n] * self.decay + p.detach() * (1 - self.decay)


def train_step(model, opt, ema, x):
    loss = (model(x) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    ema.update(model)
    return loss


def _setup():
    rt.seed(0)
    model = rt.nn.Linear(3, 1)
    return model, rt.optimizer.Momentum(0.1, momentum=0.9, parameters=model.parameters(),
                                        weight_decay=0.01), EMA(model)


def test_ema_of_detached_parameters_after_the_step():
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(4, 3)).astype("float32") for _ in range(4)]
    eager, conv = _setup(), _setup()
    w = eager[0].weight.numpy().astype("float64")
    b = eager[0].bias.numpy().astype("float64")
    shadow_w, vel_w, vel_b = w.copy(), np.zeros_like(w), np.zeros_like(b)
    shadow_b = b.copy()
    static = d2s.to_static(train_step)
    for x in xs:
        train_step(*eager, rt.to_tensor(x))
        static(*conv, rt.to_tensor(x))
        r = x.astype("float64") @ w + b  # (NumPy: momentum with L2 decay, then the EMA)
        gw = 2 * x.T @ r / r.size + 0.01 * w
        gb = 2 * r.sum(0) / r.size + 0.01 * b
        vel_w, vel_b = 0.9 * vel_w + gw, 0.9 * vel_b + gb
        w, b = w - 0.1 * vel_w, b - 0.1 * vel_b
        shadow_w, shadow_b = shadow_w * 0.5 + w * 0.5, shadow_b * 0.5 + b * 0.5
        for ema in (eager[2], conv[2]):
            np.testing.assert_allclose(ema.shadow["weight"].numpy(), shadow_w, rtol=1e-5,
                                       atol=1e-6)
            np.testing.assert_allclose(ema.shadow["bias"].numpy(), shadow_b, rtol=1e-5,
                                       atol=1e-6)
            assert ema.shadow["weight"].stop_gradient
    assert len(static.program_cache) == 1


def test_detach_reads_the_value_of_each_call():
    layer = rt.nn.Linear(2, 1)

    def shifted(x):
        return x + layer.bias.detach()

    static = d2s.to_static(shifted)
    for v in (1.0, 2.0, -3.0):
        layer.bias.set_value(np.array([v], "float32"))
        want, got = shifted(rt.ones([1])), static(rt.ones([1]))
        assert got.numpy().tolist() == want.numpy().tolist() == [1.0 + v]
        assert got.stop_gradient == want.stop_gradient
