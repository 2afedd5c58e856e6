"""Issue 12, item 2 follow-up: a helper's run-time check (`raise` / `assert` under a tensor
condition) reached from a `while` test (`while not done(h):`, `while check(h).sum() < k:`)
inside a `try` body, or inside a function called from one. The test is computed before the
loop, again at the end of the body and before each `continue`; a failure leaves the loop and
reaches the `except` clauses when the program runs, and the loop's `else` does not run, as
in eager code. Outside a `try`, the helper's check raises the user's error when the program
runs.

Eager vs static vs NumPy through ONE program: loops that end at once, after some
iterations, fail at the first test, fail after some iterations.
"""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


def done(h):
    if h.max() > 20:
        raise OverflowError("diverged")
    return h.sum() > 10


def _done_ref(a):
    if a.max() > 20:
        raise OverflowError
    return a.sum() > 10


class Doubler(rt.nn.Layer):
    def forward(self, x):
        try:
            h = x
            while not done(h):
                h = h * 2.0
        except OverflowError:
            h = -x
        return h


def _doubler_ref(a):
    try:
        h = a
        while not _done_ref(h):
            h = h * 2
    except OverflowError:
        h = -a
    return h


ROWS = [[1.0, 1.0], [6.0, 4.5], [-1.0, 3.0], [30.0, 40.0]]
# doubles three times; ends at once; fails after three doublings; fails at the first test


def _check(fn, ref, rows, static=None):
    static = static or d2s.to_static(fn)
    for row in rows:
        want, got = fn(_t(row)), static(_t(row))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, err_msg=str(row))
        np.testing.assert_allclose(got.numpy(), ref(np.asarray(row, "float64")), rtol=1e-5,
                                   err_msg=str(row))
    return static


def test_while_test_helper_raise_reaches_the_except():
    static = _check(Doubler(), _doubler_ref, ROWS, d2s.to_static(Doubler()))
    assert len(static.forward.program_cache) == 1


def check(h):
    assert (h.abs() < 50).all(), "exploded"
    return h


def tripled(x):
    steps = 0.0
    try:
        h = x
        while check(h).sum() < 10:
            h = h * 3.0
            steps = steps + 1.0
            if h.min() < -5:
                continue  # the test is computed again before the next iteration
            h = h + 0.5
        else:
            steps = steps + 100.0  # only where the loop ended by its test
    except AssertionError:
        h = x * 0.0
        steps = -1.0
    return h, steps


def _tripled_ref(a):
    steps = 0.0
    try:
        h = a
        while True:
            if not (np.abs(h) < 50).all():
                raise AssertionError
            if not h.sum() < 10:
                steps += 100.0  # the `else`
                break
            h = h * 3
            steps += 1
            if h.min() < -5:
                continue
            h = h + 0.5
    except AssertionError:
        h, steps = a * 0, -1.0
    return h, steps


def test_assert_in_a_while_test_with_continue_and_else():
    static = d2s.to_static(tripled)
    # (ends at once; some iterations; `continue` path then ends; fails after iterations)
    for row in ([6.0, 5.0], [1.0, 1.0], [-1.0, 4.0], [-20.0, 25.0], [60.0, 0.0]):
        want, got = tripled(_t(row)), static(_t(row))
        ref = _tripled_ref(np.asarray(row, "float64"))
        for w, g, r in zip(want, got, ref, strict=True):
            g = np.asarray(g.numpy() if hasattr(g, "numpy") else g)
            np.testing.assert_allclose(g, np.asarray(w.numpy() if hasattr(w, "numpy") else w),
                                       rtol=1e-6, err_msg=str(row))
            np.testing.assert_allclose(g, r, rtol=1e-5, err_msg=str(row))
    assert len(static.program_cache) == 1


def settle(h):  # a helper whose own loop test fails: converted for the caller's `try`
    while not done(h):
        h = h * 2.0
    return h + 1.0


def calls_settle(x):
    try:
        y = settle(x) * 2.0
    except OverflowError:
        y = x - 100.0
    return y


def _calls_settle_ref(a):
    try:
        h = a
        while not _done_ref(h):
            h = h * 2
        return (h + 1) * 2
    except OverflowError:
        return a - 100


def test_while_test_in_a_helper_converted_for_the_try():
    _check(calls_settle, _calls_settle_ref, ROWS)


def without_try(x):
    h = x
    while not done(h):
        h = h * 2.0
    return h


def test_outside_a_try_the_check_raises_when_the_program_runs():
    static = d2s.to_static(without_try)
    np.testing.assert_allclose(static(_t([1.0, 1.0])).numpy(), [8.0, 8.0])
    with pytest.raises(OverflowError, match="diverged") as info:
        static(_t([-1.0, 3.0]))
    assert "test_try_while_tests.py" in "\n".join(
        [str(info.value)] + getattr(info.value, "__notes__", []))
    np.testing.assert_allclose(static(_t([6.0, 4.5])).numpy(), [6.0, 4.5])
    assert len(static.program_cache) == 1


def test_gradients_on_the_paths_that_pass():
    static = d2s.to_static(calls_settle)
    for row in ([1.0, 1.0], [6.0, 4.5], [30.0, 40.0]):
        x = _t(row)
        x.stop_gradient = False
        static(x).sum().backward()
        want = numeric_grad(lambda a: float(calls_settle(rt.to_tensor(a.astype("float32")))
                                            .sum().item()), np.asarray(row, "float64"),
                            eps=1e-3)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-2, atol=1e-2)
