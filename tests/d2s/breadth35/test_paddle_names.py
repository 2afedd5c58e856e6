"""Paddle names that Paddle's own dygraph-to-static tests call and were missing: `paddle.t`
and `Tensor.t()`, `F.temporal_shift` (the TSM test), eager and converted against NumPy, with
gradients against finite differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
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


def shift_reference(x, seg_num, ratio):
    """TSM's shift written with NumPy index arithmetic, frame by frame."""
    nt, c = x.shape[:2]
    back, fwd = int(c * ratio), int(c * 2 * ratio)
    out = x.copy()
    for i in range(nt):
        t = i % seg_num
        out[i, :back] = x[i - 1, :back] if t > 0 else 0
        out[i, back:fwd] = x[i + 1, back:fwd] if t < seg_num - 1 else 0
    return out


def tsm_block(x):
    y = F.temporal_shift(x, seg_num=3, shift_ratio=0.25)
    if y.mean() > 0:
        y = y * 2
    return y


@pytest.mark.parametrize("batch", [1, 2])
def test_temporal_shift_eager_and_converted_with_a_dynamic_batch(batch):
    x = np.random.default_rng(batch).normal(size=(batch * 3, 8, 2, 2)).astype(np.float32)
    expected = shift_reference(x, 3, 0.25)
    expected = expected * 2 if expected.mean() > 0 else expected
    converted = d2s.to_static(tsm_block, input_spec=[d2s.InputSpec([None, 8, 2, 2], "float32")])
    for fn in (tsm_block, converted):
        np.testing.assert_allclose(fn(rt.to_tensor(x)).numpy(), expected, rtol=1e-6)


def test_temporal_shift_channels_last():
    x = np.random.default_rng(5).normal(size=(4, 2, 3, 6)).astype(np.float32)  # N*T, H, W, C
    got = F.temporal_shift(rt.to_tensor(x), seg_num=2, shift_ratio=0.3, data_format="NHWC")
    expected = shift_reference(x.transpose(0, 3, 1, 2), 2, 0.3).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got.numpy(), expected)


def test_temporal_shift_gradient_matches_finite_differences():
    x0 = np.random.default_rng(7).normal(size=(4, 4, 1, 2))
    w = np.random.default_rng(8).normal(size=x0.shape)

    def loss(xv):
        return float((shift_reference(xv, 2, 0.25) * w).sum() ** 2)

    x = rt.to_tensor(x0, stop_gradient=False)
    ((F.temporal_shift(x, 2, 0.25) * rt.to_tensor(w)).sum() ** 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(loss, x0), rtol=1e-5, atol=1e-8)


def test_temporal_shift_refuses_a_ratio_over_one_half():
    with pytest.raises(ValueError, match="shift_ratio must be in"):
        F.temporal_shift(rt.ones([2, 4, 1, 1]), seg_num=2, shift_ratio=0.7)
