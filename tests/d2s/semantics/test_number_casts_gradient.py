"""`float(t)` / `int(t)` of a one-element tensor in converted code: a Python number in eager
mode, so nothing flows back through it; the converted program must give the same gradients
(Paddle's converted `float()` keeps a gradient path, and its gradients differ from eager's).
Checked against eager mode and a NumPy reference that holds each number fixed (finite
differences would see the dependence through the number, which eager autograd does not),
with inputs that take both branches of one converted function."""
import numpy as np
import pytest

import d2s
import runtime as rt


def scaled(x, w):
    s = float(w.sum()) * 2 + 1  # a number: w gets no gradient through it
    if s > 1:
        return (x * w).sum() * s
    return (x * w).sum() / s


def reused(x):
    m = x.mean()
    n = float(m)  # the same dtype: the number must not stop the gradient of `m` itself
    return m * 3 + n


def counted(x):
    k = int(x.max() * 2)  # an int: no gradient either
    return (x * k).sum()


def _grads(fn, arrays):
    ts = [rt.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    out.backward()
    return float(out.numpy()), [t.grad.numpy() for t in ts]


def _held(fn, arrays):
    """The NumPy gradients with every number the function takes held fixed (what eager
    autograd gives: a Python number is a constant to it)."""
    if fn is scaled:
        x, w = arrays
        k = float(w.sum()) * 2 + 1
        k = k if k > 1 else 1 / k
        return [w * k, x * k]
    if fn is reused:
        (x,) = arrays
        return [np.full_like(x, 3 / x.size)]
    (x,) = arrays
    return [np.full_like(x, int(x.max() * 2))]


CASES = [
    (scaled, [[[1.0, 2.0], [0.5, -1.0]], [[0.3, 0.2], [0.1, 0.4]]]),  # s > 1
    (scaled, [[[1.0, 2.0], [0.5, -1.0]], [[-0.3, -0.2], [-0.1, -0.4]]]),  # s < 1
    (reused, [[[1.0, 2.0, 4.0]]]),
    (counted, [[[0.2, 1.3, 0.7]]]),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_number_casts_leave_gradients_as_eager(k):
    fn, arrays = CASES[k]
    static = d2s.to_static(fn)
    for fn_, arrays_ in [(f, a) for f, a in CASES if f is fn]:  # one program, every input
        # (float32: converted `float()` is a float32 value, as in Paddle)
        arrays_ = [np.asarray(a, "float32") for a in arrays_]
        want_out, want = _grads(fn_, arrays_)
        got_out, got = _grads(static, arrays_)
        assert got_out == pytest.approx(want_out, rel=1e-6)
        for g, w, n in zip(got, want, _held(fn_, arrays_)):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(g, n, rtol=1e-5, atol=1e-6)
