"""x[index] and x[index] = value: eager vs NumPy over many index forms, setitem gradients for
the destination and the value, in-place writes on untracked tensors, the errors, and static
mode (when runtime.static is available) vs eager.
"""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
from runtime import static

A = np.arange(60.0).reshape(3, 4, 5)
MASK = A[..., 0] > 20  # shape (3, 4)

# Each entry: an index built from NumPy pieces; `tensorize` turns its arrays into tensors.
INDEXES = [
    1, -1, (1, 2), (1, 2, 3), slice(None, None, -1), (slice(2, 0, -1), slice(None, None, 2)),
    (Ellipsis, 1), (None, 1), (Ellipsis, None), (slice(1, None), Ellipsis, [4, 0]),
    [0, 2], ([0, 2], [1, 3]), (slice(None), [0, 2], [1, 3]), ([0, 2], slice(None), [1, 3]),
    (MASK,), (slice(None), A[0] > 5), (1, [0, 1], None), np.array([[0, 1], [2, 0]]),
    [True, False, True], (0, slice(None, None, -2), [1, 1, 1]), ([0, 1], None, [1, 2]),
    (1, slice(None), [0, 1]), (Ellipsis,), (), (slice(-100, 100),), (2, -1, slice(-2, None)),
]


def tensorize(index):
    items = index if isinstance(index, tuple) else (index,)
    return tuple(rt.to_tensor(np.asarray(i)) if isinstance(i, (list, np.ndarray)) else i
                 for i in items)


@pytest.mark.parametrize("index", INDEXES, ids=[repr(i)[:40] for i in INDEXES])
@pytest.mark.parametrize("as_tensor", [False, True], ids=["literal", "tensor"])
def test_getitem_matches_numpy(index, as_tensor):
    x = rt.to_tensor(A)
    got = x[tensorize(index)] if as_tensor else x[index]
    want = A[index]
    assert got.shape == list(want.shape)
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.dtype == "float64"


def test_getitem_returns_a_copy_not_a_view():
    x = rt.to_tensor(A)
    row = x[0]
    row[0, 0] = -1.0
    assert x.numpy()[0, 0, 0] == 0.0


def test_iteration_and_len_use_getitem():
    x = rt.to_tensor(A)
    assert len(x) == 3
    rows = list(x)
    assert [r.shape for r in rows] == [[4, 5]] * 3
    np.testing.assert_array_equal(rows[2].numpy(), A[2])


def test_int_tensor_scalar_index_drops_the_axis():
    x = rt.to_tensor(A)
    i = rt.to_tensor(2)
    np.testing.assert_array_equal(x[i].numpy(), A[2])
    np.testing.assert_array_equal(x[:, i, 1:].numpy(), A[:, 2, 1:])


def test_slice_bounds_may_be_tensors():
    x = rt.to_tensor(A)
    n = rt.to_tensor(3)
    np.testing.assert_array_equal(x[:, 1:n].numpy(), A[:, 1:3])
    np.testing.assert_array_equal(rt.slice(x, [2], [rt.to_tensor(1)], [4]).numpy(),
                                  A[:, :, 1:4])


def test_paddle_slice_and_strided_slice_clamp_like_python():
    x = rt.to_tensor(A)
    np.testing.assert_array_equal(rt.slice(x, [0, 2], [1, -3], [10**9, 10**9]).numpy(),
                                  A[1:, :, -3:])
    np.testing.assert_array_equal(rt.strided_slice(x, [1], [3], [-10], [-2]).numpy(),
                                  A[:, 3::-2])


# ---- setitem values ---------------------------------------------------------------------------

SET_CASES = [
    (1, 7.0), ((slice(None), 1), np.arange(5.0)), ((Ellipsis, 0), np.ones((3, 1))),
    ([0, 2], np.arange(20.0).reshape(4, 5)), (([0, 2], [1, 3]), np.array([[-1.0], [-2.0]])),
    ((MASK,), -5.0), ((slice(None, None, -1), 0, slice(1, 3)), np.ones((1, 3, 2))),
    ((None, 1, 2), 3), (([0, 1, 0], [1, 1, 1], 0), 9.0),
]


@pytest.mark.parametrize("index,value", SET_CASES, ids=[repr(c[0])[:40] for c in SET_CASES])
@pytest.mark.parametrize("form", ["literal", "tensor"])
def test_setitem_matches_numpy_and_writes_in_place(index, value, form):
    want = A.copy()
    want[index] = value
    x = rt.to_tensor(A)
    data, version = x._data, x._version
    if form == "tensor":
        x[tensorize(index)] = rt.to_tensor(np.asarray(value, dtype=np.float64))
    else:
        x[index] = value
    np.testing.assert_array_equal(x.numpy(), want)
    assert x._data is data, "an untracked tensor is written in place"
    assert x._version == version + 1


def test_setitem_casts_value_to_the_destination_dtype():
    x = rt.zeros([3], dtype="int64")
    x[1] = 2.7
    x[[0, 2]] = [5.0, 6.0]
    assert x.dtype == "int64" and x.tolist() == [5, 2, 6]


def test_setitem_through_a_view_does_not_leak_into_the_source():
    x = rt.to_tensor(A)
    y = x.reshape([12, 5])
    y[0] = 100.0
    assert x.numpy()[0, 0, 0] == 0.0 and y.numpy()[0, 0] == 100.0
    e = rt.expand(rt.ones([1, 3]), [2, 3])  # a read-only broadcast view
    e[0, 0] = 5.0
    assert e.tolist() == [[5.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


def test_setitem_errors_name_the_op_and_shapes():
    x = rt.to_tensor(A)
    with pytest.raises(IndexError, match=r"setitem: index 3 is out of range for axis 0 with "
                                         r"size 3 \(x shape \[3, 4, 5\]\)"):
        x[3] = 1.0
    with pytest.raises(ValueError, match=r"setitem: value of shape \[4\] cannot be assigned to "
                                         r"the selection of shape \[4, 5\]"):
        x[0] = np.ones(4)
    with pytest.raises(TypeError, match=r"getitem: unsupported index 'a'"):
        x["a"] = 1.0


# ---- setitem gradients ------------------------------------------------------------------------

GRAD_CASES = [
    ((1, slice(None), 2), (4,)), ((slice(None), [0, 3]), (3, 2, 5)), ((Ellipsis, 1), (1, 4)),
    ((MASK,), ()), (([0, 2], [1, 1]), (2, 5)), ((0,), (1, 4, 5)),
]


@pytest.mark.parametrize("index,vshape", GRAD_CASES, ids=[repr(c[0])[:40] for c in GRAD_CASES])
def test_setitem_gradients_for_destination_and_value(index, vshape):
    rng = np.random.default_rng(0)
    c = rng.standard_normal(A.shape)
    v0 = rng.standard_normal(vshape)
    w = rt.to_tensor(A * 0.1, stop_gradient=False)
    v = rt.to_tensor(v0, stop_gradient=False)
    y = w * 2.0
    y[index] = v * 3.0
    (y * rt.to_tensor(c)).sum().backward()

    keep = np.ones(A.shape)
    keep[index] = 0.0
    np.testing.assert_allclose(w.grad.numpy(), 2.0 * c * keep, rtol=1e-12)
    # d/dv of sum(c[index] * broadcast(3v)): the selection's cotangent summed to v's shape
    want = 3.0 * _sum_to(c[index], v0.shape)
    np.testing.assert_allclose(v.grad.numpy(), want, rtol=1e-12)


def _sum_to(g, shape):
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    g = g.reshape((1,) * (len(shape) - g.ndim) + g.shape)
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def test_setitem_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    c = rng.standard_normal((3, 4))
    x0, v0 = rng.standard_normal((3, 4)), rng.standard_normal(2)

    def f(x, v):
        y = np.tanh(x)
        y[[0, 2], [3, 1]] = v * v
        return np.sum(y * c)

    x = rt.to_tensor(x0, stop_gradient=False)
    v = rt.to_tensor(v0, stop_gradient=False)
    y = rt.tanh(x)
    y[rt.to_tensor([0, 2]), rt.to_tensor([3, 1])] = v * v
    gx, gv = rt.grad((y * rt.to_tensor(c)).sum(), [x, v])
    for got, arg in ((gx, 0), (gv, 1)):
        base = [x0, v0]
        num = np.zeros_like(base[arg])
        for i in range(num.size):
            hi = [b.copy() for b in base]
            lo = [b.copy() for b in base]
            hi[arg].flat[i] += 1e-6
            lo[arg].flat[i] -= 1e-6
            num.flat[i] = (f(*hi) - f(*lo)) / 2e-6
        np.testing.assert_allclose(got.numpy(), num, rtol=1e-6, atol=1e-8)


def test_value_gradient_keeps_the_value_dtype():
    w = rt.to_tensor(np.ones(4), stop_gradient=False)
    v = rt.to_tensor(np.array([2.0], np.float32), stop_gradient=False)
    y = w * 1.0
    y[1:3] = v  # float32 value into a float64 destination
    (y * 3.0).sum().backward()
    assert v.grad.dtype == "float32" and v.grad.tolist() == [6.0]
    assert w.grad.tolist() == [3.0, 0.0, 0.0, 3.0]


def test_assigning_from_a_slice_of_the_same_tensor():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal(3)

    def f(a, b):
        y = a.copy()
        y[0] = b * 2.0
        y[:, 1:] = y[:, :2] * 3.0
        return np.sum(y * y)

    x = rt.to_tensor(a, stop_gradient=False)
    v = rt.to_tensor(b, stop_gradient=False)
    y = x * 1.0
    y[0] = v * 2.0
    y[:, 1:] = y[:, :2] * 3.0  # reads y, then rebinds y: the read stays valid
    (y * y).sum().backward()
    num = np.zeros_like(a)
    for i in range(a.size):
        hi, lo = a.copy(), a.copy()
        hi.flat[i] += 1e-6
        lo.flat[i] -= 1e-6
        num.flat[i] = (f(hi, b) - f(lo, b)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-6, atol=1e-6)
    assert v.grad is not None


def test_setitem_on_a_leaf_that_requires_grad_is_a_clear_error():
    w = rt.to_tensor(A, stop_gradient=False)
    with pytest.raises(RuntimeError, match="in-place assignment to a leaf tensor that requires "
                                           "grad"):
        w[0] = 1.0
    with rt.no_grad():  # allowed without recording (e.g. initialising a parameter)
        w[0] = 1.0
    assert w.numpy()[0].sum() == 20.0 and w._node is None


def test_in_place_write_after_use_is_detected_by_autograd():
    w = rt.to_tensor(np.ones(3), stop_gradient=False)
    x = rt.to_tensor(np.arange(3.0))
    y = (w * x).sum()
    x[0] = 10.0
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()


def test_untracked_destination_with_tracked_value_becomes_tracked():
    x = rt.zeros([3])
    v = rt.to_tensor(2.0, stop_gradient=False)
    x[1] = v * v
    assert not x.stop_gradient
    (x * rt.to_tensor([1.0, 5.0, 1.0])).sum().backward()
    assert v.grad.item() == pytest.approx(20.0)


def test_setitem_on_an_op_output_keeps_that_ops_gradient():
    from runtime.nn import functional as F
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))

    def grad_of(assign):
        w = rt.to_tensor(a, stop_gradient=False)
        y = F.softmax(w, -1)
        if assign:
            y[:, 0] = 0.0
        else:
            y = y * rt.to_tensor([0.0, 1.0, 1.0])
        (y * rt.to_tensor(c)).sum().backward()
        return w.grad.numpy()

    np.testing.assert_allclose(grad_of(True), grad_of(False), rtol=1e-12)


def test_getitem_double_backward():
    x = rt.to_tensor(np.array([0.5, -1.0, 2.0]), stop_gradient=False)
    s = x[[0, 0, 2]]
    y = (s * s * s).sum()
    (g,) = rt.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [2 * 3 * 0.25, 0.0, 3 * 4.0])
    (gg,) = rt.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [2 * 6 * 0.5, 0.0, 6 * 2.0])


# ---- masked_select (no OpInfo: its output length depends on the data) ------------------------

def test_masked_select_values_grads_and_errors():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    m = a > 0
    x = rt.to_tensor(a, stop_gradient=False)
    out = rt.masked_select(x, rt.to_tensor(m))
    np.testing.assert_array_equal(out.numpy(), a[m])
    w = rng.standard_normal(out.shape)
    out.backward(rt.to_tensor(w))
    want = np.zeros_like(a)
    want[m] = w
    np.testing.assert_array_equal(x.grad.numpy(), want)
    # a broadcast mask: every row selects with the same column mask
    x.clear_grad()
    cols = np.array([True, False, True, True])
    out = rt.masked_select(x, rt.to_tensor(cols))
    np.testing.assert_array_equal(out.numpy(), a[:, cols].reshape(-1))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(cols, a.shape) * 1.0)
    with pytest.raises(TypeError, match="masked_select: mask must be bool, got float64"):
        rt.masked_select(x, rt.to_tensor(a))
    with pytest.raises(ValueError, match=r"masked_select: x has shape \[3, 4\] but mask has "
                                         r"shape \[3\]"):
        rt.masked_select(x, rt.to_tensor(np.array([True, False, True])))


def test_masked_select_double_backward():
    x = rt.to_tensor(np.array([1.0, -2.0, 3.0]), stop_gradient=False)
    y = rt.masked_select(x, rt.to_tensor([True, False, True]))
    (g,) = rt.grad((y * y * y).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [3.0, 0.0, 27.0])
    (gg,) = rt.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 0.0, 18.0])


# ---- static mode ------------------------------------------------------------------------------


def test_static_getitem_and_setitem_match_eager():
    c = np.random.default_rng(0).standard_normal((3, 4, 5))
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 4, 5], "float64")
        i = static.data("i", [], "int64")
        x.stop_gradient = False
        y = x * 2.0
        y[i, 1:] = 7.0
        y[:, None, 0][..., 2] = 1.0  # a write into a temporary: y itself is unchanged
        y[MASK] = -1.0
        z = y[:, [0, 2], i]
        loss = (y * c).sum() + z.sum()
        (gx,) = static.gradients([loss], [x])
    out_y, out_z, out_g = static.Executor().run(main, feed={"x": A, "i": np.array(1)},
                                                fetch_list=[y, z, gx])
    w = rt.to_tensor(A, stop_gradient=False)
    ey = w * 2.0
    ey[1, 1:] = 7.0
    ey[MASK] = -1.0
    ez = ey[:, [0, 2], 1]
    ((ey * rt.to_tensor(c)).sum() + ez.sum()).backward()
    np.testing.assert_allclose(out_y, ey.numpy())
    np.testing.assert_allclose(out_z, ez.numpy())
    np.testing.assert_allclose(out_g, w.grad.numpy())
