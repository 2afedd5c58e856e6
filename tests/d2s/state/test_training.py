"""Training through converted code whose state lives in mutated dicts, aliases and tensor
arrays: gradients agree with finite differences, and a few SGD steps agree with eager."""
import numpy as np

import d2s
import runtime as rt
from finite_differences import numeric_grad

from .helpers import t


class Cached(rt.nn.Layer):
    """A Layer that keeps per-branch features in a dict and collects loop steps in a list."""

    def __init__(self):
        super().__init__()
        self.lin = rt.nn.Linear(3, 3)
        self.state = {"feat": {"h": rt.zeros([1, 3])}}

    def forward(self, x):
        h = self.lin(x)
        feats = self.state["feat"]
        if rt.mean(h) > 0:
            feats["h"] = rt.tanh(h)
        else:
            feats["h"] = h * 0.5
        steps = []
        i = rt.zeros([])
        g = feats["h"]
        while i < 2:
            g = rt.tanh(g * 1.5)
            steps.append(g)
            i = i + 1.0
        return (rt.stack(steps).sum() + feats["h"].sum()) * 1.0


def _loss_np(w, b, x):
    h = x @ w + b
    f = np.tanh(h) if h.mean() > 0 else h * 0.5
    g, total = f, 0.0
    for _ in range(2):
        g = np.tanh(g * 1.5)
        total += g.sum()
    return total + f.sum()


def test_gradients_through_mutated_dict_and_array_match_finite_differences():
    layer = d2s.to_static(Cached())
    w0 = layer.lin.weight.numpy().astype(np.float64)
    b0 = layer.lin.bias.numpy().astype(np.float64)
    for xv in ([[0.5, 1.0, 1.5]], [[-1.0, -2.0, -0.5]]):  # both branches, one program
        x0 = np.asarray(xv, np.float64)
        layer.clear_gradients()
        loss = layer(t(xv))
        loss.backward()
        np.testing.assert_allclose(float(loss), _loss_np(w0, b0, x0), rtol=1e-5)
        gw = numeric_grad(lambda w: _loss_np(w, b0, x0), w0)
        gb = numeric_grad(lambda b: _loss_np(w0, b, x0), b0)
        np.testing.assert_allclose(layer.lin.weight.grad.numpy(), gw, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(layer.lin.bias.grad.numpy(), gb, rtol=1e-3, atol=1e-4)
    assert len(layer.forward.program_cache) == 1
    assert isinstance(layer.state["feat"]["h"], rt.Tensor)


def test_sgd_steps_agree_with_eager():
    eager, static = Cached(), d2s.to_static(Cached())
    static.set_state_dict(eager.state_dict())
    opts = [rt.optimizer.SGD(learning_rate=0.1, parameters=m.parameters())
            for m in (eager, static)]
    for xv in ([[0.5, 1.0, 1.5]], [[-1.0, -2.0, -0.5]], [[0.2, -0.1, 0.3]]):
        for m, opt in zip((eager, static), opts):
            loss = m(t(xv))
            loss.backward()
            opt.step()
            opt.clear_grad()
        np.testing.assert_allclose(static.lin.weight.numpy(), eager.lin.weight.numpy(),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(static.state["feat"]["h"].numpy(),
                                   eager.state["feat"]["h"].numpy(), rtol=1e-5, atol=1e-6)
