"""`float(t)`, `int(t)`, `t.item()` and `t.numpy()` in converted code: a Python number or a
NumPy array in eager mode, so nothing flows back through them; the converted program keeps
them in the graph and must give the same gradients (Paddle's converted `float()` keeps a
gradient path, and its gradients differ from its eager mode's).
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


def itemized(x):
    s = x.sum().item()
    return (x * s).sum()


def as_array(x):
    s = x.sum().numpy()
    if s > 0:
        return (x * s).sum()
    return (x - s).sum()


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
    if fn is itemized or fn is as_array and x_sum(arrays) > 0:
        return [np.full_like(arrays[0], x_sum(arrays))]
    if fn is as_array:
        return [np.ones_like(arrays[0])]
    (x,) = arrays
    return [np.full_like(x, int(x.max() * 2))]


def x_sum(arrays) -> float:
    return float(arrays[0].sum())


CASES = [
    (scaled, [[[1.0, 2.0], [0.5, -1.0]], [[0.3, 0.2], [0.1, 0.4]]]),  # s > 1
    (scaled, [[[1.0, 2.0], [0.5, -1.0]], [[-0.3, -0.2], [-0.1, -0.4]]]),  # s < 1
    (reused, [[[1.0, 2.0, 4.0]]]),
    (counted, [[[0.2, 1.3, 0.7]]]),
    (itemized, [[[0.5, -1.5, 2.0]]]),
    (as_array, [[[0.5, 1.5, 2.0]]]),
    (as_array, [[[-0.5, -1.5, 2.0]]]),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_host_values_leave_gradients_as_eager(k):
    fn, arrays = CASES[k]
    static = d2s.to_static(fn)
    for fn_, arrays_ in [(f, a) for f, a in CASES if f is fn]:  # one program, every input
        # (float32: converted `float()` is a float32 value, as in Paddle)
        arrays_ = [np.asarray(a, "float32") for a in arrays_]
        want_out, want = _grads(fn_, arrays_)
        got_out, got = _grads(static, arrays_)
        assert got_out == pytest.approx(want_out, rel=1e-6)
        for g, w, n in zip(got, want, _held(fn_, arrays_), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(g, n, rtol=1e-5, atol=1e-6)


def writes_through(x):
    y = x * 1.0
    n = y.numpy()  # eager: a view of y
    n[0] = 5.0
    return y * 2


def test_a_write_through_numpy_is_eagers_without_gradients_and_clear_with_them():
    static = d2s.to_static(writes_through)
    x = np.array([1.0, 2.0, 3.0], "float32")
    with rt.no_grad():
        assert static(rt.to_tensor(x)).numpy().tolist() == [10.0, 4.0, 6.0]
        assert writes_through(rt.to_tensor(x)).numpy().tolist() == [10.0, 4.0, 6.0]
    # with a gradient, eager changes y's values but not its gradient path: a program cannot
    # say that, so it is an error (not a gradient that differs)
    with pytest.raises(TypeError, match="in-place write into a tensor that shares memory"):
        static(rt.to_tensor(x, stop_gradient=False))
