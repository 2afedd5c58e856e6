"""A `with` block whose body returns under a tensor condition (issue 35, item 6): the code
after `if c: return` inside the block moves into its `else`, as it does outside one, so both
paths return a value (it was refused: "returns None on some paths"). Eager vs static vs NumPy
on both paths of one program; the gradient against finite differences."""
import contextlib

import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

INPUTS = [np.array([1.0, 2.0], "float32"), np.array([-1.0, 0.5], "float32")]
ENTERED = []


@contextlib.contextmanager
def scope(name):
    ENTERED.append(name)
    yield


def gated(x):
    with scope("gate"):
        if x.sum() > 0:
            return x * x
        y = x * 3.0
        return y + 1.0


def reference(v):
    return v * v if v.sum() > 0 else v * 3.0 + 1.0


def test_a_return_under_a_tensor_if_inside_with():
    static = d2s.to_static(gated, full_graph=True)
    for xv in INPUTS:
        for fn in (gated, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            y = fn(x)
            np.testing.assert_allclose(y.numpy(), reference(xv), rtol=1e-6)
            y.sum().backward()
            want = numeric_grad(lambda v, xv=xv: float(
                (v * v if xv.sum() > 0 else v * 3.0 + 1.0).sum()), xv.astype("float64"))
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def no_grad_head(x):
    with rt.no_grad():
        if x.mean() > 0:
            return x * 2.0
        return -x


def test_a_return_inside_no_grad():
    static = d2s.to_static(no_grad_head, full_graph=True)
    for xv in INPUTS:
        want = xv * 2.0 if xv.mean() > 0 else -xv
        for fn in (no_grad_head, static):
            np.testing.assert_allclose(fn(rt.to_tensor(xv)).numpy(), want)
