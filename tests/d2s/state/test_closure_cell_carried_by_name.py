"""A closure variable (a name a nested helper declares `nonlocal`) that a graph loop's body
rebinds is carried by name, like any local: the loop's two traces (first-trip shapes, then
loop shapes) setting it from the loop's parameter are not a change "only once its values
have their loop shapes" (state-same-shape fuzz seed 18002 refused this)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def scan(x, use_helper):
    total = x * 0.0

    def add(v):
        nonlocal total
        total = total + v

    for _ in range(3):
        if use_helper:
            add(x)
        else:
            total = total + x * 2.0
        if total.sum() > 4.0:  # a tensor decides: the loop is a graph loop
            return total, 1
    return total, 0


def dead_branch(x, y):
    lst = [x * 1.0, y * 1.0]
    cell = x * 0.0

    def bump(v):
        nonlocal cell
        cell = cell + v

    if rt.mean(x) > 0.0:
        lst[0] = lst[0] + 1.0
    for _ in range(2):
        if True:
            if rt.mean(x) > 0.0:
                return lst[0], cell
        else:
            cell = cell + lst[-1]
    return lst[1], cell


def _reference_scan(x, use_helper):
    total = np.zeros_like(x)
    for _ in range(3):
        total = total + (x if use_helper else x * 2.0)
        if total.sum() > 4.0:
            return total, 1
    return total, 0


@pytest.mark.parametrize("use_helper", [True, False])
def test_closure_variable_rebound_in_graph_loop(use_helper):
    static = d2s.to_static(scan)
    for xs in ([0.5, 0.25, 0.25], [1.0, 2.0, 0.5], [0.1, 0.1, 0.1], [-1.0, 0.5, 0.0]):
        x = np.array(xs, "float32")
        want, flag = _reference_scan(x, use_helper)
        got, got_flag = static(rt.to_tensor(x), use_helper)
        eager, eager_flag = scan(rt.to_tensor(x), use_helper)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        np.testing.assert_array_equal(got.numpy(), eager.numpy())
        assert got.dtype == eager.dtype and got.stop_gradient == eager.stop_gradient
        assert got_flag == eager_flag == flag and type(got_flag) is int


def test_closure_variable_assigned_on_an_untaken_python_branch():
    static = d2s.to_static(dead_branch)
    for xs in ([1.25, 0.75, 1.25], [-0.25, -0.25, -2.75]):
        x = rt.to_tensor(np.array(xs, "float32"))
        y = x * 2.0
        got, eager = static(x, y), dead_branch(x, y)
        assert len(got) == len(eager) == 2
        for a, b in zip(got, eager):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert type(a) is type(b) and a.dtype == b.dtype
            assert a.stop_gradient == b.stop_gradient
