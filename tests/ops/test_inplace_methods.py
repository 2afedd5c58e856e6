"""Paddle's in-place tensor methods (`x.add_(y)`, `w.zero_()`, `b.fill_(v)`, `w.uniform_()`):
eager vs converted code vs NumPy, gradients through them against finite differences, and
Paddle's refusals (a leaf that requires grad outside `no_grad`, a broadcast that grows `x`)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def _t(v, grad=False, dtype="float32"):
    return rt.to_tensor(np.array(v, dtype), stop_gradient=not grad)


@pytest.mark.parametrize("name, args, ref", [
    ("add_", (_t([1.0, -1.0]),), lambda x: x + np.array([1.0, -1.0])),
    ("subtract_", (_t([0.5, 0.5]),), lambda x: x - 0.5),
    ("multiply_", (_t([2.0, 3.0]),), lambda x: x * np.array([2.0, 3.0])),
    ("divide_", (_t([2.0, 4.0]),), lambda x: x / np.array([2.0, 4.0])),
    ("scale_", (3.0,), lambda x: x * 3.0),
    ("clip_", (-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    ("exp_", (), np.exp),
    ("tanh_", (), np.tanh),
    ("abs_", (), np.abs),
    ("neg_", (), np.negative),
    ("floor_", (), np.floor),
])
def test_writes_the_value_into_the_same_tensor(name, args, ref):
    xv = np.array([0.7, -1.3], "float32")
    x = _t(xv)
    out = getattr(x, name)(*args)
    assert out is x
    assert x.dtype == rt.float32
    np.testing.assert_allclose(x.numpy(), ref(xv.astype("float64")), rtol=1e-6)


def test_zero_fill_and_uniform_keep_shape_and_dtype():
    x = _t([[1.0, 2.0], [3.0, 4.0]])
    assert x.zero_() is x and x.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    x.fill_(0.25)
    assert x.numpy().tolist() == [[0.25, 0.25], [0.25, 0.25]]
    x.uniform_(-0.1, 0.1)
    assert x.shape == [2, 2] and x.dtype == rt.float32
    assert np.all(np.abs(x.numpy()) <= 0.1) and len(set(x.numpy().ravel().tolist())) > 1
    i = rt.to_tensor(np.array([1, 2], "int64"))
    i.add_(rt.to_tensor(np.array([3, 4], "int64")))
    assert i.dtype == rt.int64 and i.numpy().tolist() == [4, 6]


def test_a_parameter_refuses_outside_no_grad_and_updates_inside():
    lin = rt.nn.Linear(2, 2)
    w0 = lin.weight.numpy().copy()
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        lin.weight.add_(rt.ones([2, 2]))
    with rt.no_grad():
        lin.weight.multiply_(rt.full([2, 2], 0.5)).add_(rt.ones([2, 2]))
    np.testing.assert_allclose(lin.weight.numpy(), w0 * 0.5 + 1.0, rtol=1e-6)
    assert not lin.weight.stop_gradient


def test_a_broadcast_that_grows_the_tensor_is_a_value_error():
    with pytest.raises(ValueError, match=r"add_: the result has shape \[3, 2\]"):
        _t([1.0, 2.0]).add_(rt.ones([3, 2]))


def _chain(a):
    b = a * 2.0
    b.exp_()
    b.add_(a)
    return (b * b).sum()


def test_gradient_through_in_place_ops_matches_finite_differences():
    av = np.array([0.3, -0.4, 0.1])
    a = rt.to_tensor(av.astype("float64"), stop_gradient=False)
    _chain(a).backward()

    def f(v):
        b = np.exp(2.0 * v) + v
        return float((b * b).sum())

    np.testing.assert_allclose(a.grad.numpy(), numeric_grad(f, av), rtol=1e-6)


def _step(x, bias):
    h = x * 1.0
    h.add_(bias)
    if h.mean() > 0:          # a tensor if: both paths in one program
        h.scale_(3.0)
    else:
        h.clip_(-1.0, 1.0)
    return h


def test_converted_code_gives_eagers_values_and_gradients():
    static = d2s.to_static(_step)
    for xv in ([1.0, 2.0], [-5.0, 1.0], [0.2, -0.9]):
        bias = rt.ones([2])
        xe, xs = _t(xv, grad=True), _t(xv, grad=True)
        e, s = _step(xe, bias), static(xs, bias)
        np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6)
        h = np.array(xv) + 1.0
        np.testing.assert_allclose(s.numpy(), h * 3.0 if h.mean() > 0 else np.clip(h, -1, 1),
                                   rtol=1e-6)
        e.sum().backward()
        s.sum().backward()
        np.testing.assert_allclose(xs.grad.numpy(), xe.grad.numpy())
        assert s.stop_gradient is e.stop_gradient is False and s.dtype == e.dtype
        assert bias.grad is None and xs.grad.dtype == xe.grad.dtype
