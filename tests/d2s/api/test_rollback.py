"""`StaticFunction.rollback()` restores the eager function wherever the converted one is
stored (an instance attribute, a Layer's forward, a class attribute, a class body), and
returns it as Paddle does; each converted call is checked against the eager one first."""
import types

import numpy as np

import d2s
import runtime as rt


class Scorer(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def infer(self, x):
        y = self.fc(x)
        if rt.mean(y) > 0:
            return rt.tanh(y)
        return y * 0.5

    def forward(self, x):
        return self.infer(x) + 1.0


class Decorated(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    @d2s.to_static
    def forward(self, x):
        return rt.nn.functional.relu(self.fc(x))


def inputs():
    """Two batches that take the two branches of `Scorer.infer`."""
    return [rt.to_tensor(np.full([2, 3], v, "float32")) for v in (4.0, -4.0)]


def reference_infer(net, x):
    y = x.numpy() @ net.fc.weight.numpy() + net.fc.bias.numpy()
    return np.tanh(y) if y.mean() > 0 else y * 0.5


def test_rollback_of_a_method_stored_on_the_instance():
    net = Scorer()
    net.infer = d2s.to_static(net.infer)
    for x in inputs():
        np.testing.assert_allclose(net.infer(x).numpy(), reference_infer(net, x), rtol=1e-5)
    eager = net.infer.rollback()
    assert isinstance(net.infer, types.MethodType) and net.infer.__func__ is Scorer.infer
    assert "infer" not in net.__dict__  # the class's method shows through again
    assert isinstance(eager, types.MethodType) and eager.__self__ is net
    for x in inputs():
        np.testing.assert_allclose(eager(x).numpy(), reference_infer(net, x), rtol=1e-5)


def test_rollback_under_another_name_keeps_the_name_working():
    net = Scorer()
    net.fast_infer = d2s.to_static(net.infer)
    x = inputs()[0]
    expected = net.fast_infer(x).numpy()
    net.fast_infer.rollback()
    assert isinstance(net.fast_infer, types.MethodType)
    np.testing.assert_allclose(net.fast_infer(x).numpy(), expected, rtol=1e-5)


def test_rollback_of_a_layer_converted_in_place():
    net = Scorer()
    assert d2s.to_static(net) is net
    assert isinstance(net.forward, d2s.StaticFunction)
    x = inputs()[1]
    static_out = net(x).numpy()
    eager = net.forward.rollback()
    assert isinstance(net.forward, types.MethodType) and "forward" not in net.__dict__
    np.testing.assert_allclose(eager(x).numpy(), static_out, rtol=1e-5)
    np.testing.assert_allclose(net(x).numpy(), reference_infer(net, x) + 1.0, rtol=1e-5)


def test_rollback_of_a_layer_keeps_a_forward_the_instance_had():
    net = Scorer()
    net.forward = net.infer  # an instance-level forward set before conversion
    d2s.to_static(net)
    net.forward.rollback()
    assert net.__dict__["forward"] == net.infer


def test_rollback_of_a_method_converted_on_the_class():
    class Local(Scorer):
        pass

    original = Local.forward
    Local.forward = d2s.to_static(Local.forward)
    a, b = Local(), Local()
    x = inputs()[0]
    np.testing.assert_allclose(a(x).numpy(), reference_infer(a, x) + 1.0, rtol=1e-5)
    assert isinstance(b.forward, d2s.StaticFunction)
    returned = Local.forward.rollback()
    assert returned is original and Local.__dict__["forward"] is original
    for net in (a, b):
        assert isinstance(net.forward, types.MethodType)
        np.testing.assert_allclose(net(x).numpy(), reference_infer(net, x) + 1.0, rtol=1e-5)


def test_rollback_through_one_instance_of_a_class_decorated_method():
    a, b = Decorated(), Decorated()
    x = inputs()[0]
    expected = np.maximum(x.numpy() @ a.fc.weight.numpy() + a.fc.bias.numpy(), 0)
    np.testing.assert_allclose(a(x).numpy(), expected, rtol=1e-5)
    eager = a.forward.rollback()
    assert eager.__self__ is a and isinstance(a.forward, types.MethodType)
    np.testing.assert_allclose(a(x).numpy(), expected, rtol=1e-5)
    assert isinstance(b.forward, d2s.StaticFunction)  # other instances stay converted
    assert isinstance(Decorated.__dict__["forward"], d2s.StaticFunction)


def test_rollback_of_a_plain_function_returns_it():
    def double(x):
        return x * 2

    static = d2s.to_static(double)
    np.testing.assert_allclose(static(inputs()[0]).numpy(), np.full([2, 3], 8.0))
    assert static.rollback() is double
