"""Lists that a graph loop's body reads, then a tensor `if` grows (issue 35, found by the
breadth fuzzer, seed 18002): the loop's body function keeps closure cells of the lists, and
looking for other references to the growing list compared those cells with `==`, which
compares their contents (`[0.5] == [tensor]` is a tensor): an internal `bool() of a tensor`
at the `if`. The list becomes a tensor array; eager vs static vs NumPy on both paths through
one program, with gradients against finite differences."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

BELOW = np.array([0.75, 0.25, 0.25], "float32")  # x[2] < 0.5: appends; loop runs once
ABOVE = np.array([-2.75, 1.25, 1.25], "float32")  # x[2] >= 0.5: keeps one item; twice


def refine(x, y):
    h = x * 1.0
    outs = [y]
    gains = [0.5]
    for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        h = h + len(outs) * gains[0]
    if x[2] < 0.5:
        outs.append(h * 0.5)
    return rt.stack(outs).sum(0) + h, len(outs)


def refine_ref(x, y):
    trips = int(np.clip(x[1] + 1.0, 0.0, 3.0))
    h = x + 0.5 * trips
    outs = [y, h * 0.5] if x[2] < 0.5 else [y]
    return np.stack(outs).sum(0) + h, len(outs)


def test_a_list_read_by_a_graph_loop_then_grown_by_a_tensor_if_becomes_an_array():
    static = d2s.to_static(refine)
    y = rt.to_tensor(np.array([1.0, -1.0, 2.0], "float32"))
    for xv in (BELOW, ABOVE):
        want_sum, want_len = refine_ref(xv, y.numpy())
        for run in (refine, static):
            total, n = run(rt.to_tensor(xv), y)
            np.testing.assert_allclose(total.numpy(), want_sum, rtol=1e-6)
            assert int(n) == want_len
    assert len(static.program_cache) == 1


def test_gradients_through_the_grown_list_match_finite_differences():
    static = d2s.to_static(refine)
    y64 = np.array([1.0, -1.0, 2.0])
    for xv in (BELOW, ABOVE):
        want = numeric_grad(lambda x: float((refine_ref(x, y64)[0] ** 2).sum()),
                            xv.astype("float64"))
        for run in (refine, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            total, _ = run(x, rt.to_tensor(y64.astype("float32")))
            (total ** 2).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)
