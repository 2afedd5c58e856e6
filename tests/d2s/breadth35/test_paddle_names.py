"""Paddle names that Paddle's own dygraph-to-static tests call and were missing: `paddle.t`
and `Tensor.t()`, eager and converted against NumPy, with a gradient against finite
differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def weighted_transpose(x, w):
    y = rt.t(x) * w
    if y.sum() > 0:
        y = y.t() + 1
    else:
        y = y.t() - 1
    return y


def reference(x, w):
    y = x.T * w
    return y.T + 1 if y.sum() > 0 else y.T - 1


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_t_of_a_matrix_eager_and_converted(sign):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) * sign
    w = np.array([[1.0, 2.0], [0.5, 1.0], [3.0, -1.0]], dtype=np.float32)
    converted = d2s.to_static(weighted_transpose)
    for fn in (weighted_transpose, converted):
        got = fn(rt.to_tensor(x), rt.to_tensor(w))
        assert got.shape == [2, 3]
        np.testing.assert_allclose(got.numpy(), reference(x, w), rtol=1e-6)


def test_t_keeps_vectors_and_scalars():
    v = rt.to_tensor([1.0, 2.0, 3.0])
    s = rt.to_tensor(4.0)
    assert rt.t(v).tolist() == [1.0, 2.0, 3.0]
    assert v.t().shape == [3]
    assert rt.t(s).item() == 4.0


def test_t_gradient_matches_finite_differences():
    x0 = np.random.default_rng(3).normal(size=(2, 3))
    w = np.array([[1.0, 2.0], [0.5, 1.0], [3.0, -1.0]])

    def loss(xv):
        return float(((xv.T * w) ** 2).sum())

    x = rt.to_tensor(x0, stop_gradient=False)
    ((rt.t(x) * rt.to_tensor(w)) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(loss, x0), rtol=1e-5)


def three_d(x):
    return x.t()


def test_t_of_three_dims_raises_at_the_users_line():
    with pytest.raises(ValueError, match="at most 2") as info:
        d2s.to_static(three_d)(rt.ones([2, 2, 2]))
    assert_at_user_line(info.value, __file__, three_d.__code__.co_firstlineno + 1)
