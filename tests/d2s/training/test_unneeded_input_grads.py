"""The backward of a converted call computes gradients only for the inputs that require one:
a conv net's input image usually does not, and its gradient through the first convolution
is a whole convolution's work (issue 37: the `to_static` training step of the ResNet block
ran six convolution gradients where the whole converted step runs five). Gradients equal
eager's, and an input that requires a gradient on a later call gets it."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from runtime.ops import nn_conv
from tests.finite_differences import numeric_grad


class ConvBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(2, 3, 3, padding=1)
        self.bn = nn.BatchNorm2D(3)

    def forward(self, x):
        return nn.functional.relu(self.bn(self.conv(x)))


@pytest.fixture
def grad_input_calls(monkeypatch):
    """How many times the convolution's input-gradient kernel ran."""
    calls = []
    kernel = nn_conv.CONV2D_GRAD_INPUT.kernel

    def counted(*args, **kwargs):
        calls.append(1)
        return kernel(*args, **kwargs)
    monkeypatch.setattr(nn_conv.CONV2D_GRAD_INPUT, "kernel", counted)
    return calls


def _grads(model, x):
    model.clear_gradients()
    (model(x) ** 2).mean().backward()
    return {name: p.grad.numpy() for name, p in model.named_parameters()}, x.grad


def test_input_without_grad_gets_no_input_gradient_computed(grad_input_calls):
    rt.seed(0)
    eager = ConvBlock()
    static = ConvBlock()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    x0 = np.random.default_rng(1).normal(size=[2, 2, 5, 4]).astype("float32")
    want, _ = _grads(eager, rt.to_tensor(x0))
    for _ in range(2):
        grad_input_calls.clear()
        got, x_grad = _grads(static, rt.to_tensor(x0))
        assert grad_input_calls == [] and x_grad is None
        assert sorted(got) == sorted(want)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)


def test_the_same_converted_call_gives_the_input_its_gradient_when_it_needs_one(
        grad_input_calls):
    """First without, then with, then again without an input gradient: each backward part is
    chosen per call, and the input's gradient equals eager's and finite differences."""
    rt.seed(0)
    model = ConvBlock()
    model.eval()  # running statistics: the loss is a plain function of x
    static = d2s.to_static(model)
    x0 = np.random.default_rng(2).normal(size=[1, 2, 4, 3]).astype("float32")

    def loss_of(a):
        return float((model(rt.to_tensor(a.astype("float32"))) ** 2).mean().numpy())

    expected = numeric_grad(loss_of, x0.astype("float64"), eps=1e-2)
    for needs_grad, calls in ((False, 0), (True, 1), (False, 0)):
        grad_input_calls.clear()
        x = rt.to_tensor(x0, stop_gradient=not needs_grad)
        eager_x = rt.to_tensor(x0, stop_gradient=not needs_grad)
        (static(x) ** 2).mean().backward()
        assert len(grad_input_calls) == calls
        if not needs_grad:
            assert x.grad is None
            continue
        (model(eager_x) ** 2).mean().backward()
        np.testing.assert_allclose(x.grad.numpy(), eager_x.grad.numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=2e-2, atol=2e-3)
