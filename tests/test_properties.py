"""Property tests (hypothesis): broadcasting arithmetic agrees across NumPy, eager and static
for any pair of broadcastable shapes, and its gradients have the inputs' shapes and sum the
upstream gradient correctly."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import runtime as rt
from runtime import static

OPS = {"add": (rt.add, np.add), "subtract": (rt.subtract, np.subtract),
       "multiply": (rt.multiply, np.multiply), "maximum": (rt.maximum, np.maximum)}

shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
values = st.floats(-10, 10, allow_nan=False, width=64)


def arrays(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape)


@settings(max_examples=60, deadline=None)
@given(shapes=shapes, op=st.sampled_from(sorted(OPS)), seed=st.integers(0, 2**16))
def test_broadcasting_ops_agree_in_numpy_eager_and_static(shapes, op, seed):
    (sx, sy), _ = shapes
    xa, ya = arrays(sx, seed), arrays(sy, seed + 1)
    fn, ref = OPS[op]
    expected = ref(xa, ya)
    eager = fn(rt.to_tensor(xa, dtype="float64"), rt.to_tensor(ya, dtype="float64"))
    np.testing.assert_allclose(eager.numpy(), expected, rtol=1e-12)
    main = static.Program()
    with static.program_guard(main):
        out = fn(static.data("x", list(sx), "float64"), static.data("y", list(sy), "float64"))
    (got,) = static.Executor().run(main, feed={"x": xa, "y": ya}, fetch_list=[out])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(shapes=shapes, seed=st.integers(0, 2**16))
def test_broadcast_gradients_sum_back_to_each_input(shapes, seed):
    (sx, sy), out_shape = shapes
    xa, ya = arrays(sx, seed), arrays(sy, seed + 1)
    x = rt.to_tensor(xa, dtype="float64", stop_gradient=False)
    y = rt.to_tensor(ya, dtype="float64", stop_gradient=False)
    g = arrays(out_shape, seed + 2)
    gx, gy = rt.grad(x * y, [x, y], grad_outputs=rt.to_tensor(g, dtype="float64"))
    assert gx.shape == list(sx) and gy.shape == list(sy)
    # d(x*y)/dx summed over the broadcast axes: compare through an explicit broadcast
    full_x = np.broadcast_to(ya, out_shape) * g
    full_y = np.broadcast_to(xa, out_shape) * g
    np.testing.assert_allclose(gx.numpy().sum(), full_x.sum(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(gy.numpy().sum(), full_y.sum(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(gx.numpy(), _sum_to(full_x, sx), rtol=1e-9, atol=1e-12)


def _sum_to(a, shape):
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead))) if lead else a
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and a.shape[i] != 1)
    return a.sum(axis=axes, keepdims=True) if axes else a


@settings(max_examples=40, deadline=None)
@given(v=values, w=values)
def test_python_scalar_never_widens_a_float32_tensor(v, w):
    x = rt.to_tensor([v], dtype="float32")
    assert (x + w).dtype == "float32" and (w * x).dtype == "float32"
    np.testing.assert_allclose((x + w).numpy(), np.float32(v) + np.float32(w), rtol=1e-6,
                               atol=1e-6)
