"""rt.autograd.PyLayer: user-written forward and backward, eager and converted, checked
against NumPy and finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt


class Cube(rt.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3 * x ** 2


class ScaledTanh(rt.autograd.PyLayer):
    """Two tensor inputs, a Python scale kept on ctx, two outputs (one non-differentiable)."""

    @staticmethod
    def forward(ctx, x, w, scale=2.0):
        y = rt.tanh(x * w) * scale
        ctx.scale = scale
        ctx.save_for_backward(x, w, y)
        positive = rt.cast(y > 0, "int64")
        ctx.mark_non_differentiable(positive)
        return y, positive

    @staticmethod
    def backward(ctx, dy, dpositive):
        x, w, y = ctx.saved_tensor()
        dt = dy * (ctx.scale - y * y / ctx.scale)
        return dt * w, dt * x


def _np_scaled_tanh(x, w, scale=2.0):
    return np.tanh(x * w) * scale


def test_eager_value_and_grad_match_numpy_and_finite_differences():
    x0 = np.array([[0.3, -1.2, 0.7], [1.5, -0.4, 0.1]])
    w0 = np.array([[0.5, -0.8, 1.1], [0.9, 0.2, -0.6]])
    x = rt.to_tensor(x0, stop_gradient=False)
    w = rt.to_tensor(w0, stop_gradient=False)
    y, positive = ScaledTanh.apply(x, w, scale=1.5)
    np.testing.assert_allclose(y.numpy(), _np_scaled_tanh(x0, w0, 1.5), rtol=1e-12)
    assert positive.stop_gradient and positive.dtype == "int64"
    np.testing.assert_array_equal(positive.numpy(), (_np_scaled_tanh(x0, w0) > 0).astype(int))
    (y * y).sum().backward()
    loss = lambda a, b: float(np.sum(_np_scaled_tanh(a, b, 1.5) ** 2))
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda a: loss(a, w0), x0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(w.grad.numpy(), numeric_grad(lambda b: loss(x0, b), w0),
                               rtol=1e-6, atol=1e-8)


def test_input_that_needs_no_grad_gets_none():
    x = rt.to_tensor([0.5, 2.0], stop_gradient=False)
    w = rt.to_tensor([1.0, 3.0])
    y, _ = ScaledTanh.apply(x, w)
    y.sum().backward()
    assert w.grad is None
    assert x.grad is not None


def test_materialize_grads_off_passes_none_for_unused_outputs():
    seen = []

    class Split(rt.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, da, db):
            seen.append((da is None, db is None))
            return da * 2 if da is not None else db * 3

    x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    a, _ = Split.apply(x)
    a.sum().backward()
    assert seen == [(False, True)]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_double_backward_through_a_differentiable_backward():
    x0 = np.array([0.4, -1.3, 2.0])
    x = rt.to_tensor(x0, stop_gradient=False)
    (dx,) = rt.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(dx.numpy(), 3 * x0 ** 2)
    (ddx,) = rt.grad(dx.sum(), x)
    np.testing.assert_allclose(ddx.numpy(), 6 * x0)


def test_double_backward_through_a_numpy_backward_is_refused():
    class NumpyCube(Cube):
        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensor()
            return rt.to_tensor(3 * x.numpy() ** 2) * dy

    x = rt.to_tensor([0.4, -1.3], stop_gradient=False)
    (dx,) = rt.grad(NumpyCube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(dx.numpy(), 3 * np.array([0.4, -1.3]) ** 2)
    with pytest.raises(RuntimeError, match="NumpyCube.backward is not differentiable"):
        rt.grad(dx.sum(), x)


def test_backward_returning_the_wrong_number_of_gradients_says_so():
    class TooMany(Cube):
        @staticmethod
        def backward(ctx, dy):
            return dy, dy

    x = rt.to_tensor([1.0], stop_gradient=False)
    with pytest.raises(ValueError, match=r"TooMany.backward returned 2 gradient\(s\), but "
                                         r"forward took 1 tensor argument"):
        TooMany.apply(x).sum().backward()


def test_backward_gradient_of_the_wrong_shape_says_so():
    class Summed(Cube):
        @staticmethod
        def backward(ctx, dy):
            return dy.sum()

    x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    with pytest.raises(ValueError, match=r"Summed.backward: gradient 0 has shape \[\], but"):
        Summed.apply(x).sum().backward()


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:  # inputs take different paths through one converted program
            y, _ = ScaledTanh.apply(h, x)
        else:
            y = Cube.apply(h)
        return y.sum()


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_static_matches_eager_values_and_parameter_grads(sign):
    rt.seed(3)
    net = Net()
    x0 = sign * np.array([[0.5, 1.0, 0.2], [0.3, 0.8, 1.1]])
    with rt.no_grad():
        net.fc.bias.set_value(np.full([3], sign * 0.5, "float32"))
    x = rt.to_tensor(x0, "float32")
    eager = net(x)
    eager.backward()
    eager_grads = [p.grad.numpy().copy() for p in net.parameters()]
    net.clear_gradients()
    static_net = d2s.to_static(net)
    got = static_net(x)
    got.backward()
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-5)
    static_grads = [p.grad.numpy() for p in net.parameters()]
    assert len(static_grads) == len(eager_grads)
    for a, b in zip(static_grads, eager_grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_static_program_holds_one_pylayer_op_and_its_grad_matches_finite_differences():
    @d2s.to_static
    def f(x, w):
        y, _ = ScaledTanh.apply(x, w, scale=1.5)
        return (y * y).sum()

    x0 = np.array([[0.3, -1.2, 0.7], [1.5, -0.4, 0.1]])
    w0 = np.array([[0.5, -0.8, 1.1], [0.9, 0.2, -0.6]])
    x = rt.to_tensor(x0, stop_gradient=False)
    w = rt.to_tensor(w0, stop_gradient=False)
    loss = f(x, w)
    loss.backward()
    ref = lambda a, b: float(np.sum(_np_scaled_tanh(a, b, 1.5) ** 2))
    np.testing.assert_allclose(loss.numpy(), ref(x0, w0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda a: ref(a, w0), x0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(w.grad.numpy(), numeric_grad(lambda b: ref(x0, b), w0),
                               rtol=1e-6, atol=1e-8)
    program = str(f.concrete_program.main_program)
    assert program.count("pylayer(") == 1


class CubeNet(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        return Cube.apply(self.fc(x))


def test_a_saved_model_holding_a_pylayer_loads_and_runs_its_forward(tmp_path):
    rt.seed(0)
    net = CubeNet()
    net.eval()
    x = rt.to_tensor(np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]]), "float32")
    want = net(x).numpy()
    prefix = str(tmp_path / "cube")
    d2s.save(net, prefix, input_spec=[d2s.InputSpec([None, 3], "float32")])
    loaded = d2s.load(prefix)
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)
    ref = (x.numpy() @ net.fc.weight.numpy() + net.fc.bias.numpy()) ** 3
    np.testing.assert_allclose(want, ref, rtol=1e-5)


class SignedSquare(rt.autograd.PyLayer):
    """A tensor `if` in forward and in backward (converted code makes both graph ops)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.mean() > 0:
            y = x * 2
        else:
            y = x * x
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        if x.mean() > 0:
            g = dy * 2
        else:
            g = dy * 2 * x
        return g


def _signed_square_loss(x):
    return (SignedSquare.apply(x) * rt.to_tensor([3.0, 0.5], dtype=x.dtype)).sum()


def test_tensor_control_flow_inside_forward_and_backward_is_converted():
    static = d2s.to_static(_signed_square_loss)

    def ref(a):
        y = a * 2 if a.mean() > 0 else a * a
        return float((y * np.array([3.0, 0.5])).sum())

    for x0 in (np.array([1.0, 2.0]), np.array([-1.0, -3.0])):  # both branches, one program
        want_grad = numeric_grad(ref, x0)
        for fn in (_signed_square_loss, static):
            x = rt.to_tensor(x0, stop_gradient=False)
            loss = fn(x)
            loss.backward()
            np.testing.assert_allclose(loss.numpy(), ref(x0), rtol=1e-12)
            np.testing.assert_allclose(x.grad.numpy(), want_grad, rtol=1e-6, atol=1e-8)
    assert len(static.program_cache) == 1
    assert "cond(" in str(static.concrete_program.main_program)
