"""Second (and higher) derivatives through a converted call: `rt.grad(..., create_graph=True)`
of a converted function's or Layer's result gives a gradient that is itself differentiable,
as eager code's is (gradient penalties: WGAN-GP, R1, input-gradient regularisers)."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn
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


class RecurrentCritic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 4)
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


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


@pytest.mark.parametrize("make, shape", [(Critic, (4, 3)), (ConvCritic, (2, 2, 4, 4)),
                                         (RecurrentCritic, (2, 5, 3))],
                         ids=["linear_tanh", "conv_relu", "lstm"])
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


class NormCritic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 6)
        self.bn = nn.BatchNorm1D(6)
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        return self.out(rt.tanh(self.bn(self.fc(x))))


def test_gradient_penalty_through_batch_norm_updates_its_statistics_once():
    rt.seed(7)
    net = NormCritic()
    static = d2s.to_static(copy.deepcopy(net))
    for seed in range(2):
        x0 = np.random.RandomState(seed).randn(5, 3).astype("float32")
        net.clear_gradients()
        static.clear_gradients()
        ge, _, eager_grads = _gradient_penalty(net, x0)
        gs, _, static_grads = _gradient_penalty(static, x0)
        np.testing.assert_allclose(gs, ge, rtol=1e-4, atol=1e-6)
        _assert_same_grads(eager_grads, static_grads)
        # the gradient runs the forward ops again, but not their running-statistics writes
        np.testing.assert_allclose(static.bn._mean.numpy(), net.bn._mean.numpy(), rtol=1e-6)
        np.testing.assert_allclose(static.bn._variance.numpy(), net.bn._variance.numpy(),
                                   rtol=1e-6)


class BranchCritic(nn.Layer):
    """A critic whose head depends on a tensor `if`: each input takes one head."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 8)
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 1)

    def forward(self, x):
        h = rt.tanh(self.fc(x))
        if h.mean() > 0:
            out = self.head_a(h * h)
        else:
            out = self.head_b(rt.sin(h))
        return out


def test_gradient_penalty_through_a_tensor_if_trains_as_eager():
    rt.seed(5)
    net = BranchCritic()
    static = d2s.to_static(copy.deepcopy(net))
    rng = np.random.RandomState(1)
    base = rng.randn(4, 3).astype("float32")
    took = []
    for x0 in (base, -base, base):  # both branches of one program, then the first again
        net.clear_gradients()
        static.clear_gradients()
        ge, pe, eager_grads = _gradient_penalty(net, x0)
        gs, ps, static_grads = _gradient_penalty(static, x0)
        np.testing.assert_allclose(gs, ge, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ps, pe, rtol=1e-5)
        _assert_same_grads(eager_grads, static_grads)
        took.append((net.head_a.weight.grad is None, net.head_b.weight.grad is None))
    assert took[0] != took[1]  # the inputs took different branches
    assert len(static.forward.program_cache) == 1
    assert net.head_a.bias.grad is None  # the input gradient does not depend on a bias


def branchy(x):
    h = x * 1.5
    if x.sum() > 0:
        y = (rt.tanh(h) * h * x).sum()
    else:
        y = (rt.sin(h) * x * x).sum()
    return y


def _branchy_gradient(a):
    """NumPy: d branchy / dx."""
    h = 1.5 * a
    if a.sum() > 0:
        t = np.tanh(h)
        return 1.5 * (1 - t ** 2) * h * a + t * 1.5 * a + t * h
    return 1.5 * np.cos(h) * a * a + 2 * np.sin(h) * a


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["true_branch", "false_branch"])
def test_second_derivative_vs_finite_differences_of_the_first(sign):
    x0 = sign * np.array([0.4, -0.3, 0.9])
    v = np.array([1.0, -2.0, 0.5])
    static = d2s.to_static(branchy)
    x = rt.to_tensor(x0, stop_gradient=False)
    (dx,) = rt.grad(static(x), x, create_graph=True)
    np.testing.assert_allclose(dx.numpy(), _branchy_gradient(x0), rtol=1e-10)
    (hv,) = rt.grad((dx * rt.to_tensor(v)).sum(), x)  # Hessian times v
    expected = numeric_grad(lambda a: (_branchy_gradient(a) * v).sum(), x0)
    np.testing.assert_allclose(hv.numpy(), expected, rtol=1e-6, atol=1e-8)


def quartic(x):
    return (x ** 4).sum()


def test_third_derivative_through_a_converted_call():
    x0 = np.array([0.5, -1.5, 2.0])
    x = rt.to_tensor(x0, stop_gradient=False)
    (d1,) = rt.grad(d2s.to_static(quartic)(x), x, create_graph=True)
    (d2,) = rt.grad(d1.sum(), x, create_graph=True)
    assert not d2.stop_gradient
    (d3,) = rt.grad(d2.sum(), x)
    np.testing.assert_allclose(d1.numpy(), 4 * x0 ** 3)
    np.testing.assert_allclose(d2.numpy(), 12 * x0 ** 2)
    np.testing.assert_allclose(d3.numpy(), 24 * x0)


def branchy_penalty(x):
    (g,) = rt.grad(branchy(x), x, create_graph=True)
    return (g * g).sum()


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["true_branch", "false_branch"])
def test_converted_whole_the_penalty_with_a_tensor_if_is_eagers(sign):
    x0 = sign * np.array([0.4, -0.3, 0.9])
    x = rt.to_tensor(x0, stop_gradient=False)
    branchy_penalty(x).backward()
    eager = x.grad.numpy()
    x = rt.to_tensor(x0, stop_gradient=False)
    d2s.to_static(branchy_penalty)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), eager, rtol=1e-10)
    expected = numeric_grad(lambda a: (_branchy_gradient(a) ** 2).sum(), x0)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-8)


def looped(x, n):
    y = x
    i = rt.zeros([], "int64")
    while i < n:
        y = rt.tanh(y * x)
        i = i + 1
    return y.sum()


def dropped(x):
    h = F.dropout(x, p=0.5, training=True)
    return (h * h * x).sum()


def test_what_cannot_be_differentiated_again_is_refused_at_the_grad_call():
    x = rt.to_tensor(np.array([0.5, -0.2]), stop_gradient=False)
    n = rt.to_tensor(2)
    loop_call = d2s.to_static(looped)
    (dx,) = rt.grad(loop_call(x, n), x)  # a first derivative works
    assert dx.stop_gradient
    with pytest.raises(d2s.SecondDerivativeError, match=r"converted call of looped .*graph "
                       r"loop.*Call looped eagerly"):
        rt.grad(loop_call(x, n), x, create_graph=True)
    with pytest.raises(d2s.SecondDerivativeError, match=r"converted call of dropped .*random "
                       r"numbers \(op 'dropout'\).*as a whole"):
        rt.grad(d2s.to_static(dropped)(x), x, create_graph=True)


def dropped_penalty(x):
    h = F.dropout(x, p=0.5, training=True)
    (g,) = rt.grad((h * h * x).sum(), x, create_graph=True)
    return (g * g).sum(), h


def test_converted_whole_a_penalty_through_dropout_keeps_the_calls_mask():
    x0 = np.linspace(0.5, 2.0, 8)
    x = rt.to_tensor(x0, stop_gradient=False)
    penalty, h = d2s.to_static(dropped_penalty)(x)
    penalty.backward()
    kept = h.numpy() != 0  # h = 2 x on kept items: the penalty is sum((3 * 4 x^2)^2)
    np.testing.assert_allclose(x.grad.numpy(), 36 * 16 * kept * x0 ** 3, rtol=1e-10)


class LinearBranchCritic(nn.Layer):
    """On one branch the output is linear in `h`: the input gradient then does not depend on
    `fc.bias` (eager leaves its `.grad` None), on the other it does."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 8)
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            return self.head_a(h * h)
        return self.head_b(h)


def test_penalty_steps_with_weight_decay_and_momentum_move_what_eager_moves():
    rt.seed(11)
    net = LinearBranchCritic()
    static = d2s.to_static(copy.deepcopy(net))
    opts = [rt.optimizer.Momentum(0.05, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.1) for m in (net, static)]
    x0 = np.random.RandomState(2).randn(4, 3).astype("float32")
    x0 *= 3 / (x0 @ net.fc.weight.numpy()).mean()  # h's mean about 3 (bias small): head_a
    bias_grads = []
    for x in (x0, -x0, x0, -x0):  # both branches, twice
        for m, opt in zip((net, static), opts):
            opt.clear_grad(set_to_zero=False)  # (None: a step then skips what got none)
            _gradient_penalty(m, x)
        _assert_same_grads([p.grad for p in net.parameters()],
                           [p.grad for p in static.parameters()])
        bias_grads.append(net.fc.bias.grad is None)
        for opt in opts:
            opt.step()
    assert bias_grads == [False, True] * 2  # the linear branch gives fc.bias no gradient
    for (name, p), q in zip(net.named_parameters(), static.parameters(), strict=True):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


class Annealed(nn.Layer):
    """Keeps a Python float it changes each call (program state)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)
        self.scale = 1.0

    def forward(self, x):
        self.scale = self.scale * 0.5
        return (self.fc(x) ** 2).sum() * self.scale


def input_penalty(net, x):
    (g,) = rt.grad(net(x), x, create_graph=True)
    return (g * g).sum()


def test_program_state_numbers_are_refused_and_converting_the_caller_works():
    net = Annealed()
    twin = copy.deepcopy(net)
    x0 = np.random.RandomState(0).randn(3, 2).astype("float32")
    x = rt.to_tensor(x0, stop_gradient=False)
    with pytest.raises(d2s.SecondDerivativeError, match=r"Annealed.forward .*Python numbers "
                       r"as state \(self.scale\).*as a whole"):
        rt.grad(d2s.to_static(copy.deepcopy(net))(x), x, create_graph=True)
    converted = d2s.to_static(input_penalty)
    for _ in range(3):
        x = rt.to_tensor(x0, stop_gradient=False)
        input_penalty(net, x).backward()
        y = rt.to_tensor(x0, stop_gradient=False)
        converted(twin, y).backward()
        np.testing.assert_allclose(y.grad.numpy(), x.grad.numpy(), rtol=1e-5)
        _assert_same_grads([p.grad for p in net.parameters()],
                           [p.grad for p in twin.parameters()])
        assert twin.scale == net.scale
