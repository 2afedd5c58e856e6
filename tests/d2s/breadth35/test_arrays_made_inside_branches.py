"""A list that both branches of a tensor `if` leave as tensor arrays, made so inside them (an
inner tensor `if` in one branch, a graph loop in the other), after one branch appended to it
first (issue 35, breadth fuzzer seed 16303): it was refused with "out is a list of length 2 in
the if branch and 1 in the else branch" (the list object, changed in place by the first
append, counted as a place of its own beside the name that carries the array). It converts;
eager vs static vs NumPy over inputs taking each path through one program, with gradients
against finite differences."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def collect(x, y):
    h = x * 1.0
    outs = [y]
    if rt.sum(h) > 1.0:
        outs.append(h * 0.5)
        if x[2] < 0.5:
            outs.append(h * 0.25)
    else:
        for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
            outs.append(h * 2.0)
    return rt.stack(outs).sum(0) + h, len(outs)


def collect_ref(x, y):
    outs = [y]
    if x.sum() > 1.0:
        outs.append(x * 0.5)
        if x[2] < 0.5:
            outs.append(x * 0.25)
    else:
        outs += [x * 2.0] * int(np.clip(x[1] + 1.0, 0.0, 3.0))
    return np.stack(outs).sum(0) + x, len(outs)


INPUTS = [np.array(v, "float32") for v in (
    [0.25, 1.25, 0.25],    # sum > 1, x[2] < 0.5: three items
    [1.0, 1.0, 1.0],       # sum > 1, x[2] >= 0.5: two items
    [-1.25, 0.75, -0.75],  # the loop, once
    [-1.25, -1.5, -0.75],  # the loop, no trip
)]


def test_arrays_made_inside_both_branches_after_an_append():
    static = d2s.to_static(collect)
    y = np.array([1.0, -2.0, 0.5], "float32")
    for xv in INPUTS:
        want_total, want_n = collect_ref(xv, y)
        grad = numeric_grad(lambda v: float(collect_ref(v, y)[0].sum()), xv.astype("float64"))
        for run in (collect, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            total, n = run(x, rt.to_tensor(y))
            np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-6)
            assert int(n) == want_n
            total.sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 1
