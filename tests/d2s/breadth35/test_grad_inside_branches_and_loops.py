"""`rt.grad` called inside a tensor `if`, a Python loop with a tensor `break` (each trip a
branch) and a loop whose condition is a tensor: the backward runs inside that block, through
the ops of the enclosing blocks, and matches eager values, NumPy and finite differences. A
gradient with respect to a value from before a graph loop (which could depend on earlier
trips the program does not keep) is refused at the user's line, without internal names."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def descend_until_flat(x, tol):
    """Gradient descent on sum(x**2 * w) with rt.grad in every trip, a tensor break."""
    x = x.detach()
    x.stop_gradient = False
    for _ in range(6):
        loss = (x * x * rt.to_tensor([1.0, 3.0])).sum()
        (g,) = rt.grad(loss, x)
        if g.abs().max() < tol:
            break
        x = (x - 0.1 * g).detach()
        x.stop_gradient = False
    return x


def _np_descend(x, tol):
    w = np.array([1.0, 3.0])
    for _ in range(6):
        g = 2 * x * w
        if np.abs(g).max() < tol:
            break
        x = x - 0.1 * g
    return x


@pytest.mark.parametrize("tol", [0.5, 100.0, 1e-9])
def test_grad_in_python_loop_with_tensor_break(tol):
    x0 = np.array([1.0, 2.0], np.float32)
    static = d2s.to_static(descend_until_flat)
    want = _np_descend(x0.astype(np.float64), tol)
    eager = descend_until_flat(rt.to_tensor(x0), tol).numpy()
    got = static(rt.to_tensor(x0), tol).numpy()
    np.testing.assert_allclose(eager, want, rtol=1e-5)
    np.testing.assert_allclose(got, eager, rtol=1e-6)


def descend_tensor_steps(x, steps):
    """The trip count is a tensor: a graph loop; the input of grad is the carried value."""
    i = rt.zeros([], dtype="int64")
    while i < steps:
        x = x.detach()
        x.stop_gradient = False
        (g,) = rt.grad(rt.tanh(x).sum() + (x * x).sum(), x)
        x = x - 0.2 * g
        i += 1
    return x


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_grad_in_graph_loop_of_the_carried_value(steps):
    x0 = np.array([0.5, -1.5, 2.0], np.float32)
    want = x0.astype(np.float64)
    for _ in range(steps):
        grad = numeric_grad(lambda v: np.tanh(v).sum() + (v * v).sum(), want)
        want = want - 0.2 * grad
    static = d2s.to_static(descend_tensor_steps)
    n = rt.to_tensor(steps, dtype="int64")
    eager = descend_tensor_steps(rt.to_tensor(x0), n).numpy()
    got = static(rt.to_tensor(x0), n).numpy()
    np.testing.assert_allclose(eager, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-7)
    assert len(static.program_cache) == 1


def grad_in_branch(x, w):
    """In a tensor if: the gradient with respect to w flows through ops before the branch."""
    h = rt.tanh(x * w)
    if h.sum() > 0:
        (gw,) = rt.grad((h * h).sum(), w)
    else:
        (gw,) = rt.grad(h.sum(), w)
    return gw


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_grad_in_tensor_if_through_ops_before_it(sign):
    x = np.array([0.3, 0.7, 1.1]) * sign
    w0 = np.array([0.5, -0.2, 0.9])

    def ref(w):
        h = np.tanh(x * w)
        return (h * h).sum() if h.sum() > 0 else h.sum()

    want = numeric_grad(ref, w0)
    xt = rt.to_tensor(x.astype(np.float32))
    wt = rt.to_tensor(w0.astype(np.float32), stop_gradient=False)
    eager = grad_in_branch(xt, wt).numpy()
    got = d2s.to_static(grad_in_branch)(xt, wt).numpy()
    np.testing.assert_allclose(eager, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-7)


def grad_of_outer_value_in_graph_loop(x, w, steps):
    h = x
    i = rt.zeros([], dtype="int64")
    while i < steps:
        h = rt.tanh(h * w)
        (gw,) = rt.grad(h.sum(), w)
        h = h - gw
        i += 1
    return h


def test_grad_of_a_value_from_before_a_graph_loop_is_refused_at_the_line():
    static = d2s.to_static(grad_of_outer_value_in_graph_loop)
    w = rt.to_tensor([0.5, 0.5], stop_gradient=False)
    with pytest.raises(ValueError, match="value from before the loop") as info:
        static(rt.to_tensor([1.0, 2.0]), w, rt.to_tensor(2, dtype="int64"))
    line = inspect.getsourcelines(grad_of_outer_value_in_graph_loop)[1] + 5
    assert_at_user_line(info.value, __file__, line)
