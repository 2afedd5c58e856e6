"""A Layer whose forward only writes `self.h` (a streaming model's last state), called eagerly
with `backward()`, then converted and called with `backward()` (issue 35): the program wrote
the old `self.h` and recorded it as an input, so the backward walked into the graph the eager
backward had freed ("backward through a graph that was already freed"). The old value is not
read, so it carries no gradient path: values and gradients match eager code's."""
import numpy as np

import d2s
import runtime as rt


class LastState(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = rt.nn.Linear(3, 2)
        self.h = rt.zeros([1, 2])

    def forward(self, x):
        self.h = rt.tanh(self.proj(x))       # written, never read
        return (self.h * self.h).sum()


def reference_grads(w, b, xs):
    """d/dw, d/db of the sum over calls of sum(tanh(x @ w + b) ** 2)."""
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    for x in xs:
        h = np.tanh(x @ w + b)
        d = 2 * h * (1 - h * h)
        gw, gb = gw + x.T @ d, gb + d.sum(0)
    return gw, gb


def _twin_models():
    rt.seed(7)
    eager, converted = LastState(), LastState()
    converted.set_state_dict(eager.state_dict())
    return eager, converted


def test_converted_backward_after_an_eager_backward():
    eager, model = _twin_models()
    w, b = (p.numpy().astype("float64") for p in eager.parameters())
    xs = [np.array([[0.5, -1.0, 2.0]], "float32"), np.array([[1.5, 0.25, -0.75]], "float32")]
    model(rt.to_tensor(xs[0])).backward()    # eager: self.h now holds a freed graph
    eager(rt.to_tensor(xs[0])).backward()
    static = d2s.to_static(model.forward)
    for x in xs:
        for step in (eager, static):
            step(rt.to_tensor(x)).backward()
        np.testing.assert_allclose(model.h.numpy(), eager.h.numpy(), rtol=1e-6)
        np.testing.assert_allclose(model.h.numpy(), np.tanh(x @ w + b), rtol=1e-5)
        for got, want in zip(model.parameters(), eager.parameters(), strict=True):
            np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-5)
    want = reference_grads(w, b, [xs[0], xs[0], xs[1]])
    for got, ref in zip(model.parameters(), want, strict=True):
        np.testing.assert_allclose(got.grad.numpy(), ref, rtol=1e-5, atol=1e-6)
