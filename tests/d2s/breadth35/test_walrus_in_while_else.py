"""A walrus in the test of a `while` that has an `else` clause (issue 35): the name it binds
is read after the loop, as eager code allows (it raised `NameError` there: the test moved
into the body only without `else`). The test is computed before the loop and at the end of
each trip (a `continue` reaches it too), so the `else` stays the loop's. Eager vs static vs
a NumPy reference over bounds that end the loop by its test (the `else`) or by a `break`,
gradients against finite differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def grow_until(x, bound):
    s = x.sum() * 0.5
    while (step := s * 0.5 + 1.0) < bound:
        s = s + step
        if s > 40.0:
            break
        if s > 3.0:
            continue
        s = s + 0.25
    else:
        s = s - 1.0                              # the test ended the loop
    return s * step


def reference(x, bound):
    s = x.sum() * 0.5
    while (step := s * 0.5 + 1.0) < bound:
        s = s + step
        if s > 40.0:
            break
        if s > 3.0:
            continue
        s = s + 0.25
    else:
        s = s - 1.0
    return s * step


X = np.array([0.5, -0.25, 1.0])


@pytest.mark.parametrize("bound", [0.5, 3.0, 10.0, 1000.0])  # no trip, else, else, break
def test_a_walrus_in_a_while_test_with_else(bound):
    static = d2s.to_static(grow_until)
    want = reference(X, bound)
    for fn in (grow_until, static):
        got = fn(rt.to_tensor(X.astype("float32")), rt.to_tensor(bound))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    t = rt.to_tensor(X.astype("float32"), stop_gradient=False)
    static(t, rt.to_tensor(bound)).backward()
    grad = numeric_grad(lambda v: reference(v, bound), X)
    np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-3, atol=1e-3)


def first_large(rows, limit):
    i = 0
    while (i < rows.shape[0]) and (row := rows[i]).sum() < limit:
        i += 1
    else:
        row = row * -1.0 if i == rows.shape[0] else row
    return i, row


def test_a_walrus_in_a_later_operand_with_python_trips():
    rows = np.array([[0.5, 0.5], [2.0, 1.0], [4.0, 3.0]], "float32")
    static = d2s.to_static(first_large)
    for limit in (0.5, 2.5, 100.0):
        want = first_large(rt.to_tensor(rows), limit)
        got = static(rt.to_tensor(rows), limit)
        assert len(got) == len(want) == 2
        assert got[0] == want[0]
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy())


def count_up(x, n):
    k = 0
    while (k := k + 1) < n:                      # a Python test, no break
        x = x + 1.0
    else:
        x = x * 2.0
    return x, k


def step_up(x, n):
    i = rt.zeros([], "int64")
    while (k := i + 1) < n:                      # a tensor test, no break
        i = k
        x = x * 1.5 + i.astype("float32")
    else:
        x = x - 1.0
    return x, k


def reference_step_up(x, n):
    i = 0
    while (k := i + 1) < n:
        i = k
        x = x * 1.5 + i
    return x - 1.0, k


def test_a_walrus_in_a_while_test_with_else_and_no_break():
    x = np.array([0.5, -2.0])
    got, k = d2s.to_static(count_up)(rt.to_tensor(x.astype("float32")), 4)
    np.testing.assert_allclose(got.numpy(), (x + 3.0) * 2.0)
    assert k == 4
    static = d2s.to_static(step_up)
    for n in (0, 1, 3):
        want, want_k = reference_step_up(x, n)
        for fn in (step_up, static):
            got, k = fn(rt.to_tensor(x.astype("float32")), rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
            assert int(k) == want_k
    assert len(static.program_cache) == 1
