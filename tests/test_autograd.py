"""Eager autograd: the tape, accumulation, no_grad, higher order, hooks and its errors."""
import numpy as np
import pytest

import runtime as rt


def leaf(values, dtype="float64"):
    return rt.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=False)


def test_shared_subexpression_gets_both_contributions():
    x = leaf([0.5, -1.0, 2.0])
    h = x * x  # used twice below
    y = (h * 3.0 + rt.tanh(h)).sum()
    y.backward()
    xv = x.numpy()
    want = 6 * xv + (1 - np.tanh(xv ** 2) ** 2) * 2 * xv
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_same_tensor_twice_in_one_op():
    x = leaf([1.5, -2.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -4.0])


def test_gradients_accumulate_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0])
    x.clear_grad()
    assert x.grad is None
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_no_grad_context_manager_and_decorator():
    x = leaf([1.0, 2.0])
    with rt.no_grad():
        y = x * 2.0
        assert not rt.is_grad_enabled()
    assert rt.is_grad_enabled()
    assert y.stop_gradient and y.is_leaf

    @rt.no_grad()
    def f(t):
        return rt.tanh(t) * t

    z = f(x)
    assert z.stop_gradient
    assert (x * 2.0).stop_gradient is False


def test_no_grad_restores_state_after_an_exception():
    with pytest.raises(ValueError, match="matmul"), rt.no_grad():
        rt.matmul(rt.ones([2, 3]), rt.ones([2, 3]))
    assert rt.is_grad_enabled()


def test_stop_gradient_inputs_get_no_grad():
    x = leaf([1.0, 2.0])
    c = rt.to_tensor(np.array([3.0, 4.0]))
    (x * c).sum().backward()
    assert c.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_detach_cuts_the_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).detach() * x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 4.0])


def test_second_order_tanh_matches_analytic():
    xv = np.array([-1.2, 0.3, 0.9])
    x = leaf(xv)
    (dx,) = rt.grad(rt.tanh(x).sum(), x, create_graph=True)
    t = np.tanh(xv)
    np.testing.assert_allclose(dx.numpy(), 1 - t ** 2, rtol=1e-12)
    (ddx,) = rt.grad(dx.sum(), x, create_graph=True)
    np.testing.assert_allclose(ddx.numpy(), -2 * t * (1 - t ** 2), rtol=1e-12)
    (dddx,) = rt.grad(ddx.sum(), x)
    np.testing.assert_allclose(dddx.numpy(), -2 * (1 - t ** 2) * (1 - 3 * t ** 2), rtol=1e-12)


def test_second_order_matmul_matches_analytic():
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    a, b = leaf(av), leaf(bv)
    # f = sum((a @ b)^2): df/da = 2 (a b) b^T; d/db of sum(df/da * w) = 2 a^T (w b) + 2 w^T (a b)
    f = ((a @ b) * (a @ b)).sum()
    (ga,) = rt.grad(f, a, create_graph=True)
    np.testing.assert_allclose(ga.numpy(), 2 * (av @ bv) @ bv.T, rtol=1e-12)
    w = rng.standard_normal((3, 4))
    (gb,) = rt.grad((ga * rt.to_tensor(w)).sum(), b)
    want = 2 * av.T @ (w @ bv) + 2 * w.T @ (av @ bv)
    np.testing.assert_allclose(gb.numpy(), want, rtol=1e-12)


def test_grad_returns_without_touching_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = rt.grad((x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert x.grad is None


def test_grad_unused_input_needs_allow_unused():
    x, z = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match=r"input 1 \(shape \[1\]\) is not used"):
        rt.grad((x * 2.0).sum(), [x, z], retain_graph=True)
    gx, gz = rt.grad((x * 2.0).sum(), [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [2.0]


def test_hooks_see_and_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 3.0
    y.register_hook(lambda g: g * 10.0)  # replaces the gradient flowing into y
    y.sum().backward()
    np.testing.assert_allclose(seen[0], [30.0, 30.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    handle.remove()
    x.clear_grad()
    (x * 1.0).sum().backward()
    assert len(seen) == 1


def test_backward_through_freed_graph_raises_clearly():
    x = leaf([1.0, 2.0])
    y = (rt.tanh(x) * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="already freed.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_backward_through_integer_outputs_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="needs a floating-point tensor, got int64"):
        rt.argmax(x).backward()
    with pytest.raises(TypeError, match="needs a floating-point tensor, got int64"):
        (x > 1.0).sum().backward()
    with pytest.raises(RuntimeError, match="stop_gradient=True"):
        rt.floor_divide(x, 2.0).sum().backward()
    i = rt.to_tensor([1, 2])
    i.stop_gradient = False
    with pytest.raises(TypeError, match="backward\\(\\) needs a floating-point tensor, got int64"):
        (i * 2).backward()


def test_backward_on_non_scalar_uses_ones_or_given_grad():
    x = leaf([1.0, 2.0])
    (x * x).backward(rt.to_tensor(np.array([1.0, 0.5])))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_max_ties_split_the_gradient_evenly():
    x = leaf([[3.0, 1.0, 3.0], [0.0, 2.0, 2.0]])
    x.max(axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, 0, 0.5], [0, 0.5, 0.5]])
    x.clear_grad()
    x.min().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [1.0, 0, 0]])


def test_maximum_ties_send_the_gradient_to_y():
    x, y = leaf([1.0, 2.0]), leaf([1.0, 1.0])
    rt.maximum(x, y).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0] and y.grad.tolist() == [1.0, 0.0]


def test_where_is_differentiable_in_both_branches():
    c = rt.to_tensor([True, False, True])
    x, y = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    (rt.where(c, x, y) * rt.to_tensor(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 3.0] and y.grad.tolist() == [0.0, 2.0, 0.0]


def test_float32_grads_keep_float32():
    x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    (x * x + rt.exp(x)).mean().backward()
    assert x.grad.dtype == "float32"
