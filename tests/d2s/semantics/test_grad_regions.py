"""Item 4: `no_grad`, `detach()` and `stop_gradient = True` inside a converted forward stop
gradients in the static backward exactly as in eager mode; a frozen teacher gets no gradient
and the optimizer leaves it unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


@rt.no_grad()
def frozen_features(layer, x):
    return rt.tanh(layer(x))


class Distill(rt.nn.Layer):
    def __init__(self, style):
        super().__init__()
        self.style = style
        self.teacher = rt.nn.Linear(3, 3)
        self.student = rt.nn.Linear(3, 3)

    def forward(self, x):
        if self.style == "with":
            with rt.no_grad():
                t = self.teacher(x)
                if t.mean() > 0:  # a tensor if inside the region
                    t = t * 2
                else:
                    t = t - 1
        elif self.style == "detach":
            t = self.teacher(x).detach()
        elif self.style == "stop":
            t = self.teacher(x)
            t.stop_gradient = True
        elif self.style == "decorator":
            t = frozen_features(self.teacher, x)
        else:  # "enable": enable_grad inside no_grad gives gradients back
            with rt.no_grad():
                with rt.enable_grad():
                    t = self.teacher(x)
        s = self.student(x)
        return ((s - t) ** 2).mean()


def _grads(net, x):
    for p in net.parameters():
        p.clear_gradient() if hasattr(p, "clear_gradient") else None
    loss = net(x)
    loss.backward()
    return [None if p.grad is None else p.grad.numpy().copy() for p in
            (net.teacher.weight, net.teacher.bias, net.student.weight, net.student.bias)]


@pytest.mark.parametrize("style", ["with", "detach", "stop", "decorator", "enable"])
@pytest.mark.parametrize("sign", [1.0, -1.0])  # both branches of the tensor if
def test_teacher_gradients_match_eager(style, sign):
    rng = np.random.RandomState(1)
    x = rt.to_tensor(sign * np.abs(rng.randn(4, 3)).astype("float32"))
    rt.seed(0)
    eager = Distill(style)
    rt.seed(0)
    static = Distill(style)
    static.forward = d2s.to_static(static.forward)
    want, got = _grads(eager, x), _grads(static, x)
    for w, g in zip(want, got, strict=True):
        if w is None:
            assert g is None or not np.any(g), "a frozen teacher received a gradient"
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    frozen = style != "enable"
    assert (want[0] is None) == frozen


def test_student_gradient_vs_finite_differences():
    rt.seed(0)
    net = Distill("with")
    net.forward = d2s.to_static(net.forward)
    xv = np.random.RandomState(2).randn(4, 3).astype("float32")
    loss = net(rt.to_tensor(xv))
    loss.backward()
    w0 = net.student.weight.numpy().astype("float64")

    def f(w):
        s = xv.astype("float64") @ w + net.student.bias.numpy()
        with rt.no_grad():
            t = net.teacher(rt.to_tensor(xv)).numpy().astype("float64")
        t = t * 2 if t.mean() > 0 else t - 1
        return ((s - t) ** 2).mean()
    np.testing.assert_allclose(net.student.weight.grad.numpy(), numeric_grad(f, w0),
                               rtol=1e-3, atol=1e-4)


def test_optimizer_leaves_frozen_teacher_and_trace_under_eager_no_grad():
    rt.seed(0)
    net = Distill("with")
    net.forward = d2s.to_static(net.forward)
    x = rt.to_tensor(np.random.RandomState(3).randn(4, 3).astype("float32"))
    with rt.no_grad():  # first call (the trace) in an eager no_grad region: still trains
        net(x)
    before_t = net.teacher.weight.numpy().copy()
    before_s = net.student.weight.numpy().copy()
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    for _ in range(3):
        loss = net(x)
        loss.backward()
        opt.step()
        opt.clear_grad()
    np.testing.assert_array_equal(net.teacher.weight.numpy(), before_t)
    assert not np.allclose(net.student.weight.numpy(), before_s)
