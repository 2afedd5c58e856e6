"""Second (and higher) derivatives through a converted call: `rt.grad(..., create_graph=True)`
of a converted function's or Layer's result gives a gradient that is itself differentiable,
as eager code's is (gradient penalties: WGAN-GP, R1, input-gradient regularisers)."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn as nn
import runtime.nn.functional as F
from tests.finite_differences import numeric_grad


def cube_sum(x):
    return (x * x * x).sum()


class Critic(nn.Layer):
    """A WGAN critic: Linear, tanh, Linear."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(rt.tanh(self.fc1(x)))


class ConvCritic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(2, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 4 * 4, 1)

    def forward(self, x):
        h = F.relu(self.conv(x))
        return self.fc(h.flatten(1))


def _gradient_penalty(net, x0):
    """WGAN-GP's penalty on the input gradient, backward; returns (input gradient, penalty,
    parameters' gradients)."""
    x = rt.to_tensor(x0, stop_gradient=False)
    (g,) = rt.grad(net(x).sum(), x, create_graph=True)
    assert not g.stop_gradient
    penalty = ((g.flatten(1).norm(p=2, axis=1) - 1) ** 2).mean()
    penalty.backward()
    return g.numpy(), penalty.item(), [p.grad for p in net.parameters()]


def _assert_same_grads(eager_grads, static_grads):
    assert len(eager_grads) == len(static_grads)
    for e, s in zip(eager_grads, static_grads):
        assert (e is None) == (s is None)
        if e is not None:
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-4, atol=1e-6)


def test_second_derivative_of_a_converted_function_is_eagers():
    x0 = np.array([1.0, 2.0], "float32")
    for f in (cube_sum, d2s.to_static(cube_sum)):
        x = rt.to_tensor(x0, stop_gradient=False)
        (dx,) = rt.grad(f(x), x, create_graph=True)
        assert not dx.stop_gradient
        np.testing.assert_allclose(dx.numpy(), 3 * x0 ** 2)
        (dx * dx).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 36 * x0 ** 3)  # d/dx (3x^2)^2


def test_without_create_graph_the_gradient_is_a_constant_as_eagers():
    x0 = np.array([1.0, 2.0], "float32")
    for f in (cube_sum, d2s.to_static(cube_sum)):
        x = rt.to_tensor(x0, stop_gradient=False)
        (dx,) = rt.grad(f(x), x)
        assert dx.stop_gradient
        np.testing.assert_allclose(dx.numpy(), 3 * x0 ** 2)


@pytest.mark.parametrize("make, shape", [(Critic, (4, 3)), (ConvCritic, (2, 2, 4, 4))],
                         ids=["linear_tanh", "conv_relu"])
def test_gradient_penalty_through_a_converted_layer_trains_as_eager(make, shape):
    rt.seed(3)
    net = make()
    static = d2s.to_static(copy.deepcopy(net))
    rng = np.random.RandomState(0)
    for _ in range(2):  # the second call reuses the program and its gradient programs
        x0 = rng.randn(*shape).astype("float32")
        net.clear_gradients()
        static.clear_gradients()
        ge, pe, eager_grads = _gradient_penalty(net, x0)
        gs, ps, static_grads = _gradient_penalty(static, x0)
        np.testing.assert_allclose(gs, ge, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ps, pe, rtol=1e-5)
        _assert_same_grads(eager_grads, static_grads)
