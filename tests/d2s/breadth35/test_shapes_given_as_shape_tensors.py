"""`rt.reshape(y, rt.shape(y))` and `rt.zeros(rt.shape(x))` (Paddle's test_tensor_methods.py
and test_tensor_shape.py idioms): converted code built the result with every dim unknown
([-1]), so its `.size`, `.shape` and `.ndim` became run-time values where eager's are Python
ints, a Python `if` on them turned into a tensor `if`, and a branch eager never enters
(`y[0, 0]` of a vector) failed while traced ("getitem: too many indices for x of shape
[-1]"). `rt.shape(x)` of a shape known while building now gives its ops that shape, so one
program per input shape follows eager's Python decisions; an unknown (InputSpec None) dim
stays a run-time one."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def first_item(x):
    y = rt.reshape(x.clone(), rt.shape(x))
    n = y.size
    if n > 2:
        first = y[0, 0]
    else:
        first = y[0]
    z = rt.zeros(rt.shape(y)) + 1
    return first, n, y.ndim, z.shape, rt.expand(rt.ones([1]), rt.shape(x.reshape([-1])))


def _reference(x):
    first = x[0, 0] if x.size > 2 else x[0]
    return first, x.size, x.ndim, list(x.shape), np.ones([x.size], "float32")


def test_python_decisions_on_shapes_from_shape_tensors_follow_eager():
    static = d2s.to_static(first_item)
    for x in (np.array([3, 4], "int64"), np.array([[1, 2], [3, 4]], "int64")):
        want = first_item(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        assert_same_leaves(got, want)
        assert type(got[1]) is int and type(got[2]) is int and type(got[3]) is list
        for g, r in zip(got, _reference(x)):
            np.testing.assert_array_equal(np.asarray(g.numpy() if hasattr(g, "numpy") else g), r)


def test_an_unknown_dim_stays_a_run_time_one():
    static = d2s.to_static(lambda x: rt.reshape(x * 2, rt.shape(x)),
                           input_spec=[d2s.InputSpec([None, 2], "float32")])
    for b in (1, 3):
        x = np.arange(2 * b, dtype="float32").reshape(b, 2)
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), x * 2)
    assert len(static.program_cache) == 1
