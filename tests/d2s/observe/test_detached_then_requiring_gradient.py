"""A tensor converted code detaches (or copies with `to_tensor`) and then marks as needing a
gradient (`stop_gradient = False`, as adversarial and feature-matching code does) is a new
leaf, as eagerly: a backward through it gives nothing to what it was computed from (the
input's and the encoder's `.grad` stay None, issue 33: the converted call gave them the
gradient through the copy), while a gradient with respect to it is eager's. Also in a graph
loop's body, on the runs whose trips detached it."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

X0 = np.array([[0.5, -1.0, 2.0]], "float32")


class Refiner(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = rt.nn.Linear(3, 3)
        self.head = rt.nn.Linear(3, 1)

    def forward(self, x, copy):
        feats = self.encoder(x)
        if copy:
            z = rt.to_tensor(feats, stop_gradient=False)  # a copy without history
        else:
            z = feats.detach()
            z.stop_gradient = False  # a new leaf to refine
        (g,) = rt.grad(self.head(z).sum(), z, retain_graph=True)
        return self.head(z + 0.1 * g).sum()


def refine_steps(x, w, n):
    z = x * w
    i = 0
    while i < n:
        z = (z * 1.0).detach()
        z.stop_gradient = False
        z = z * 2.0
        i += 1
    return z


@pytest.mark.parametrize("copy", [False, True])
def test_a_leaf_made_by_detach_passes_no_gradient_back(copy):
    net, converted = Refiner(), Refiner()
    converted.set_state_dict(net.state_dict())
    static = d2s.to_static(converted)
    for model in (net, static):
        x = rt.to_tensor(X0, stop_gradient=False)
        model(x, copy).backward()
        assert x.grad is None
    assert net.encoder.weight.grad is None and converted.encoder.weight.grad is None
    np.testing.assert_allclose(converted.head.weight.grad.numpy(),
                               net.head.weight.grad.numpy(), rtol=1e-5)


def test_in_a_loop_body_the_runs_that_detach_give_the_input_none():
    w = rt.to_tensor(np.array([1.0, 2.0, 3.0], "float32"), stop_gradient=False)
    static = d2s.to_static(refine_steps)
    for n in range(3):
        grads = []
        for fn in (refine_steps, static):
            x = rt.to_tensor(X0[0], stop_gradient=False)
            w.clear_grad()
            fn(x, w, rt.to_tensor(n)).sum().backward()
            grads.append((x.grad, w.grad))
        (ex, ew), (sx, sw) = grads
        assert (sx is None, sw is None) == (ex is None, ew is None) == (n > 0, n > 0), n
        if n == 0:  # (NumPy: d(sum(x * w))/dx = w)
            np.testing.assert_allclose(sx.numpy(), w.numpy())
            np.testing.assert_allclose(sw.numpy(), ex.numpy() * 0 + X0[0])
