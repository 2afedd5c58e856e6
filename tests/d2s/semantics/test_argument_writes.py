"""A converted function that writes a tensor argument in place (`x[0] = 0`, `x[mask] = v`,
also under a tensor `if`, in a graph loop, inside a list argument, by keyword) leaves the
caller's Tensor holding what eager code would have written, on every call of one program,
with the gradient eager setitem gives. Before, the program failed with an internal
`FeedError: missing feed 'x'`."""
import numpy as np
import pytest

import d2s
import runtime as rt

from finite_differences import numeric_grad


def clamp_positive_(x):
    x[x > 0] = 0.0                     # a boolean-mask write, as in model code
    return x * 2.0


def zero_first_if_positive(x):
    if x.sum() > 0:
        x[0] = 0.0
    return x + 1.0


def scale_prefix(x, n):
    i = 0
    while i < n:
        x[i] = x[i] * 10.0
        i += 1
    return x.sum()


def write_into_list(xs, value=None):
    xs[0][1] = value[0]
    return xs[1] + 1.0


def mix(x):
    x[1] = x[0] * x[2]
    return (x * x).sum()


CASES = [
    (clamp_positive_, lambda x: (np.where(x > 0, 0, x) * 2, np.where(x > 0, 0, x))),
    (zero_first_if_positive,
     lambda x: ((np.concatenate([[0], x[1:]]) if x.sum() > 0 else x) + 1,
                np.concatenate([[0], x[1:]]) if x.sum() > 0 else x)),
]


@pytest.mark.parametrize("fn,ref", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_callers_tensor_is_written_on_every_call(fn, ref):
    static = d2s.to_static(fn)
    for xv in ([1.0, -2.0, 3.0], [-1.0, -2.0, 0.5], [4.0, 5.0, -6.0]):
        x0 = np.array(xv, "float32")
        want_out, want_x = ref(x0)
        for f in (fn, static):
            x = rt.to_tensor(x0)
            out = f(x)
            np.testing.assert_allclose(out.numpy(), want_out)
            np.testing.assert_allclose(x.numpy(), want_x)
    assert len(static.program_cache) == 1


def test_writes_in_a_graph_loop():
    static = d2s.to_static(scale_prefix)
    for n in (0, 2, 3):
        x0 = np.array([1.0, 2.0, 3.0], "float32")
        want = x0.copy()
        want[:n] *= 10
        for f in (scale_prefix, static):
            x = rt.to_tensor(x0)
            np.testing.assert_allclose(f(x, rt.to_tensor(np.array(n))).numpy(), want.sum())
            np.testing.assert_allclose(x.numpy(), want)


def test_writes_into_a_tensor_inside_a_list_argument_and_by_keyword():
    static = d2s.to_static(write_into_list)
    for f in (write_into_list, static):
        a, b = rt.to_tensor(np.array([1.0, 2.0], "float32")), rt.to_tensor(
            np.array([3.0, 4.0], "float32"))
        v = rt.to_tensor(np.array([9.0], "float32"))
        np.testing.assert_allclose(f([a, b], value=v).numpy(), [4.0, 5.0])
        np.testing.assert_allclose(a.numpy(), [1.0, 9.0])
        np.testing.assert_allclose(b.numpy(), [3.0, 4.0])


def test_gradient_through_the_written_argument_matches_eager_and_finite_differences():
    static = d2s.to_static(mix)
    p0 = np.array([1.0, 2.0, 3.0], "float32")
    grads = []
    for f in (mix, static):
        p = rt.to_tensor(p0)
        p.stop_gradient = False
        x = p * 2.0
        loss = f(x) + (x * 3.0).sum()  # reads the caller's x after the write
        loss.backward()
        grads.append(p.grad.numpy())
        np.testing.assert_allclose(x.numpy(), [2.0, 12.0, 6.0])

    def ref(v):
        x = v * 2.0
        x[1] = x[0] * x[2]
        return (x * x).sum() + (x * 3.0).sum()

    num = numeric_grad(ref, p0.astype("float64"))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    np.testing.assert_allclose(grads[1], num, rtol=1e-4)


def test_a_leaf_that_requires_grad_is_refused_as_eager_refuses_it():
    for f in (mix, d2s.to_static(mix)):
        x = rt.to_tensor(np.ones(3, "float32"))
        x.stop_gradient = False
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            f(x)
