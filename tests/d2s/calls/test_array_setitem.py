"""`lst[i] = x` on a list that became a tensor array inside a graph loop (issue 21 item 5):
eager vs static vs NumPy, with loop counts that differ between calls of one program, and the
gradient through the written elements against finite differences."""
import numpy as np

import d2s
import runtime as rt
from finite_differences import numeric_grad


def rescale_steps(x, n):
    outs = []
    for i in range(n):           # n is a tensor: a graph loop, `outs` a tensor array
        outs.append(x * (i + 1.0))
    for i in range(n):
        outs[i] = outs[i] * 2.0 + i  # item assignment on the array
    outs[-1] = outs[0] * 0.5         # a negative index counts from the end
    return rt.stack(outs).sum(axis=0)


def _numpy(x, n):
    outs = [x * (i + 1.0) for i in range(n)]
    outs = [o * 2.0 + i for i, o in enumerate(outs)]
    outs[-1] = outs[0] * 0.5
    return np.sum(outs, axis=0)


def test_item_assignment_on_a_tensor_array_matches_eager_and_numpy():
    f = d2s.to_static(rescale_steps)
    x = np.array([1.0, -2.0, 0.5], "float32")
    for n in (1, 3, 5):
        got = f(rt.to_tensor(x), rt.to_tensor(n)).numpy()
        want = rescale_steps(rt.to_tensor(x), rt.to_tensor(n)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(got, _numpy(x, n), rtol=1e-6)
    assert len(f.program_cache) == 1


def test_gradient_through_assigned_array_elements():
    f = d2s.to_static(rescale_steps)
    x0 = np.array([1.0, -2.0, 0.5])
    x = rt.to_tensor(x0.astype("float32"), stop_gradient=False)
    (f(x, rt.to_tensor(4)) ** 2).sum().backward()
    want = numeric_grad(lambda v: (_numpy(v, 4) ** 2).sum(), x0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)
