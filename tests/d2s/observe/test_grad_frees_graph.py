"""`rt.grad` inside a converted function frees the graph behind its outputs as eager code's
does: a later backward through a returned tensor computed from that graph raises eager's
"already freed" error; one computed apart from it, or after `retain_graph=True`, takes eager's
gradient (checked against finite differences). Inputs take both paths of a tensor `if`."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from tests.finite_differences import numeric_grad

INPUTS = [np.array([0.5, 1.0, 2.0], "float32"), np.array([-1.5, 0.25, -2.0], "float32")]


def scaled_tanh(x, retain):
    h = rt.tanh(x)
    if h.sum() > 0:
        h = h * 2
    (g,) = rt.grad(h.sum(), x, retain_graph=retain)
    side = x * 3
    return h, g, side


def _scaled_tanh_np(x):
    h = np.tanh(x) * (2 if np.tanh(x).sum() > 0 else 1)
    return h, (2 if np.tanh(x).sum() > 0 else 1) * (1 - np.tanh(x) ** 2)


def _call(fn, x0, retain):
    x = rt.to_tensor(x0, stop_gradient=False)
    return x, fn(x, retain)


def _backward_error(t):
    with pytest.raises(RuntimeError) as info:
        (t * t).sum().backward()
    return str(info.value)


@pytest.mark.parametrize("x0", INPUTS)
def test_grad_without_retain_graph_frees_the_outputs_graph(x0):
    static = d2s.to_static(scaled_tanh)
    h_ref, g_ref = _scaled_tanh_np(x0.astype("float64"))
    errors = []
    for fn in (scaled_tanh, static):
        x, (h, g, side) = _call(fn, x0, False)
        np.testing.assert_allclose(h.numpy(), h_ref, rtol=1e-6)
        np.testing.assert_allclose(g.numpy(), g_ref, rtol=1e-5)
        assert (h.stop_gradient, g.stop_gradient, side.stop_gradient) == (False, True, False)
        errors.append(_backward_error(h))
        assert "already freed" in errors[-1]
        assert "already freed" in _backward_error(h + side)  # (one freed part is enough)
        side.sum().backward()  # computed apart from the freed graph: takes its gradient
        np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0), rtol=1e-6)
    assert errors[0] == errors[1]


@pytest.mark.parametrize("x0", INPUTS)
def test_grad_with_retain_graph_keeps_the_outputs_graph(x0):
    static = d2s.to_static(scaled_tanh)
    h_np = _scaled_tanh_np
    expected = numeric_grad(lambda v: float((h_np(v)[0] ** 2).sum()), x0.astype("float64"))
    for fn in (scaled_tanh, static):
        x, (h, _, _) = _call(fn, x0, True)
        (h * h).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-4, atol=1e-6)


def cubed_gradient(x, retain):
    y = (x * x * x).sum()
    (g,) = rt.grad(y, x, create_graph=True)  # (create_graph keeps y's graph)
    if g.sum() > 5:
        g = g * 0.5
    (gg,) = rt.grad(g.sum(), x, retain_graph=retain)
    return g, gg


@pytest.mark.parametrize("x0", [np.array([0.5, 1.0], "float32"), np.array([2.0, 3.0], "float32")])
def test_second_order_grad_frees_the_first_gradients_graph(x0):
    static = d2s.to_static(cubed_gradient)
    half = 0.5 if (3 * x0 ** 2).sum() > 5 else 1.0
    for fn in (cubed_gradient, static):
        x, (g, gg) = _call(fn, x0, False)
        np.testing.assert_allclose(g.numpy(), half * 3 * x0 ** 2, rtol=1e-5)
        np.testing.assert_allclose(gg.numpy(), half * 6 * x0, rtol=1e-5)
        assert "already freed" in _backward_error(g)
        x, (g, _) = _call(fn, x0, True)
        g.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), half * 6 * x0, rtol=1e-5)


class InputGradient(nn.Layer):
    """A Linear whose input gradient is taken inside forward; a no_grad copy beside it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        out = self.fc(x)
        (gx,) = rt.grad(rt.tanh(out).sum(), x)
        with rt.no_grad():
            frozen = self.fc(x) * 2
        return gx, frozen, out, self.fc(x)


def test_layer_outputs_after_grad_in_forward():
    rt.seed(0)
    eager = InputGradient()
    layer = InputGradient()
    layer.set_state_dict(eager.state_dict())
    static = d2s.to_static(layer)
    x0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], "float32")
    grads = []
    for net, fn in ((eager, eager), (layer, static)):
        x = rt.to_tensor(x0, stop_gradient=False)
        gx, frozen, out, fresh = fn(x)
        assert (gx.stop_gradient, frozen.stop_gradient, out.stop_gradient) == (True, True, False)
        assert "already freed" in _backward_error(out)
        fresh.sum().backward()  # a second application of fc: a graph of its own
        grads.append([net.fc.weight.grad.numpy(), net.fc.bias.grad.numpy(), x.grad.numpy()])
    assert len(grads[0]) == len(grads[1])
    w = eager.fc.weight.numpy()
    for e, s, ref in zip(grads[0], grads[1], [np.repeat(x0.sum(0)[:, None], 2, 1),
                                                np.full(2, 2.0), np.tile(w.sum(1), (2, 1))]):
        np.testing.assert_allclose(s, e, rtol=1e-6)
        np.testing.assert_allclose(s, ref, rtol=1e-5)


def grad_on_one_branch(x):
    y = x * 2
    if y.sum() > 0:
        (g,) = rt.grad(y.sum(), x)  # frees y's graph on the runs that take this branch
        y = y + g
    return y, x * x


@pytest.mark.parametrize("x0", INPUTS)
def test_grad_under_a_tensor_if_frees_only_on_runs_that_take_it(x0):
    static = d2s.to_static(grad_on_one_branch)
    took = x0.sum() > 0
    for fn in (grad_on_one_branch, static):
        x = rt.to_tensor(x0, stop_gradient=False)
        y, sq = fn(x)
        np.testing.assert_allclose(y.numpy(), 2 * x0 + 2 * took, rtol=1e-6)
        if took:
            assert "already freed" in _backward_error(y)
            sq.sum().backward()  # (never freed)
            np.testing.assert_allclose(x.grad.numpy(), 2 * x0, rtol=1e-6)
        else:
            (y.sum() + sq.sum()).backward()
            np.testing.assert_allclose(x.grad.numpy(), 2 + 2 * x0, rtol=1e-6)
