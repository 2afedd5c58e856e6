"""`x.register_hook(fn)` on a tensor computed inside converted code: the hook runs in the
program's backward and replaces the gradient as in eager mode, in an eager training loop
around a converted Layer and in a converted training step; a hook that returns None (one
that only looks at the gradient) sees every backward's values; a hook registered inside a
tensor-dependent branch raises."""
import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt


class ClippedHead(rt.nn.Layer):
    """Scales the gradient reaching the hidden layer, clips the one reaching the input."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(lambda g: g * 3.0)
        x.register_hook(lambda g: rt.clip(g, -0.5, 0.5))
        if rt.mean(h) > 0:
            return rt.tanh(h)
        return h * h


def unhooked_loss(net, x):
    """The same function in NumPy, without the hooks."""
    h = x @ net.fc.weight.numpy().astype("float64") + net.fc.bias.numpy().astype("float64")
    return (np.tanh(h) if h.mean() > 0 else h * h).sum()


def hooked_input_grad(net, x):
    """Eager semantics in NumPy: d loss / dh scaled by 3 flows back to x, then is clipped."""
    def loss_of_h(h):
        return (np.tanh(h) if h.mean() > 0 else h * h).sum()

    w = net.fc.weight.numpy().astype("float64")
    h = x @ w + net.fc.bias.numpy().astype("float64")
    return np.clip(3.0 * numeric_grad(loss_of_h, h) @ w.T, -0.5, 0.5)


INPUTS = [np.full([2, 3], 2.0), np.full([2, 3], -2.0)]  # the two branches


def test_hooks_in_a_converted_layer_match_eager_numpy_and_finite_differences():
    eager = ClippedHead()
    eager.fc.weight.set_value(np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]], "float32"))
    static = d2s.to_static(ClippedHead())
    static.set_state_dict(eager.state_dict())
    for values in INPUTS:
        grads = {}
        for name, net in (("eager", eager), ("static", static)):
            net.clear_gradients()
            x = rt.to_tensor(values.astype("float32"), stop_gradient=False)
            net(x).sum().backward()
            grads[name] = (x.grad.numpy(), net.fc.weight.grad.numpy())
        np.testing.assert_allclose(grads["static"][0], grads["eager"][0], rtol=1e-5)
        np.testing.assert_allclose(grads["static"][1], grads["eager"][1], rtol=1e-5)
        np.testing.assert_allclose(grads["static"][0], hooked_input_grad(eager, values),
                                   rtol=1e-4, atol=1e-5)
        # the weight's gradient is 3x the hook-free one, as finite differences give it
        w0 = eager.fc.weight.numpy().astype("float64")

        def loss_of_w(w, values=values):
            eager.fc.weight.set_value(w.astype("float32"))
            return unhooked_loss(eager, values)

        fd = numeric_grad(loss_of_w, w0, eps=1e-3)
        eager.fc.weight.set_value(w0.astype("float32"))
        np.testing.assert_allclose(grads["static"][1], 3.0 * fd, rtol=1e-3, atol=1e-3)
    assert len(static.forward.program_cache) == 1  # one program, both branches


def test_hook_in_a_converted_training_step():
    def make():
        rt.seed(3)
        net = rt.nn.Linear(3, 1)
        return net, rt.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())

    def step(net, opt, x, y):
        out = net(x)
        out.register_hook(lambda g: g * 0.5)  # halve the step
        loss = rt.mean((out - y) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    eager, static = make(), make()
    converted = d2s.to_static(step)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rt.to_tensor(rng.normal(size=(4, 3)).astype("float32"))
        y = rt.to_tensor(rng.normal(size=(4, 1)).astype("float32"))
        np.testing.assert_allclose(converted(*static, x, y).numpy(),
                                   step(*eager, x, y).numpy(), rtol=1e-5)
    np.testing.assert_allclose(static[0].weight.numpy(), eager[0].weight.numpy(), rtol=1e-5)


def test_a_removed_hook_does_not_run():
    @d2s.to_static
    def f(x):
        y = x * 2.0
        handle = y.register_hook(lambda g: g * 100.0)
        handle.remove()
        return rt.sum(y)

    x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    f(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_a_hook_that_only_looks_sees_each_backward_as_eager():
    seen = []

    def f(x):
        y = rt.tanh(x)
        y.register_hook(lambda g: seen.append(g))  # Grad-CAM style: keep the gradient
        if rt.mean(x) > 0:
            return rt.sum(y * 2.0)
        return rt.sum(y)

    got = {}
    for name, fn in (("eager", f), ("static", d2s.to_static(f))):
        seen.clear()
        for v in ([1.0, 2.0], [-1.0, -2.0], [3.0, 1.0]):  # both branches of one program
            x = rt.to_tensor(v, stop_gradient=False)
            fn(x).backward()
            np.testing.assert_allclose(x.grad.numpy(), (2.0 if sum(v) > 0 else 1.0) * (
                1 - np.tanh(np.array(v)) ** 2), rtol=1e-5)
        got[name] = list(seen)
    assert len(got["static"]) == len(got["eager"]) == 3
    for a, b in zip(got["static"], got["eager"], strict=True):
        assert type(a) is rt.Tensor  # a value, never a traced Variable left in the list
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert [g.numpy().tolist() for g in got["static"]] == [[2.0, 2.0], [1.0, 1.0], [2.0, 2.0]]


def test_a_hook_inside_a_tensor_branch_raises():
    @d2s.to_static
    def f(x):
        y = x * 2.0
        if rt.mean(x) > 0:
            y = rt.tanh(y)
            y.register_hook(lambda g: g * 2.0)
        return rt.sum(y)

    with pytest.raises(NotImplementedError, match="register_hook on .* inside a branch"):
        f(rt.to_tensor([1.0, 2.0], stop_gradient=False))
