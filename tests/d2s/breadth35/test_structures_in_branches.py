"""A namedtuple rebound in both branches of a tensor `if` inside a graph loop (issue 35):
it converts (it raised `P.__new__() missing 1 required positional argument` where the
branches' values were merged); eager vs static vs NumPy on both paths, 0 to 3 trips, one
program, the gradient against finite differences."""
import collections

import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

Pair = collections.namedtuple("Pair", "low high")


def widen(x, n):
    p = Pair(x, x * 2.0)
    for i in range(n):
        if x.sum() > 0:
            p = Pair(p.low * 1.5, p.high)
        else:
            p = Pair(p.low, p.high - 1.0)
    return p.low + p.high


def reference(v, k):
    low, high = v, v * 2.0
    for _ in range(k):
        if v.sum() > 0:
            low = low * 1.5
        else:
            high = high - 1.0
    return low + high


def test_a_namedtuple_rebound_in_both_branches_of_a_loop():
    static = d2s.to_static(widen, full_graph=True)
    for values in ([1.0, 2.0], [-1.0, 0.5]):
        xv = np.array(values, "float32")
        for k in (0, 1, 3):
            want = reference(xv, k)
            for fn in (widen, static):
                x = rt.to_tensor(xv, stop_gradient=False)
                y = fn(x, rt.to_tensor(k))
                np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
                y.sum().backward()
                np.testing.assert_allclose(
                    x.grad.numpy(), numeric_grad(lambda v, k=k: float(reference(v, k).sum()),
                                                 xv.astype("float64")), rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1
