"""Item 2 (issue 12): run-time `raise` / `assert` checks inside functions called from a `try`
body (helpers, nested helpers, methods, sub-Layers' `forward`, loops) reach the caller's
`except` clauses when the program runs, exactly as eager's exception does: the first error
raised wins, the statement that made the call and the rest of the body do not happen.

Each test runs eager and static on inputs that pass and fail the checks, through ONE program.
"""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(x) for x in v]
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype="float64")


def _same(fn, rows, static=None, programs=1):
    static = static or d2s.to_static(fn)
    for row in rows:
        args = row if isinstance(row, tuple) else (row,)
        args = [_t(a) if isinstance(a, list) else a for a in args]
        want, got = _np(fn(*args)), _np(static(*args))
        for w, g in zip(want if isinstance(want, list) else [want],
                        got if isinstance(got, list) else [got], strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=str(row))
    assert len(static.program_cache) == programs
    return static


# -- helpers at several depths -------------------------------------------------------------

def check_range(h, limit):
    assert (h.abs() < limit).all(), "out of range"
    if h.sum() < 0:
        raise ValueError("negative total")
    return h * 2


def scaled(h):
    h = check_range(h + 1, 6.0)  # the helper's error leaves the rest of this one undone
    return h + 1


def nested_helpers(x):
    tag = 0.0
    y = x
    try:
        y = x * 3
        y = scaled(y)
        tag = 1.0
    except ValueError:
        tag = 2.0
    except AssertionError:
        tag = 3.0
    return y, tag


def test_nested_helpers_reach_the_matching_except():
    # passes; ValueError (sum < 0); AssertionError (|h| >= 6) first although the sum is < 0
    _same(nested_helpers, [[1.0, 0.5], [-1.0, -0.5], [-3.0, 1.0]])


def test_the_assignment_that_called_the_failing_helper_does_not_happen():
    """`y = x * 3` ran, `y = scaled(y)` did not: the `except` and the code after it see
    `y = x * 3`, as in eager code."""
    static = d2s.to_static(nested_helpers)
    y, tag = static(_t([-1.0, -0.5]))
    np.testing.assert_allclose(y.numpy(), [-3.0, -1.5])
    assert float(tag) == 2.0


def two_checks(x):
    try:
        a = check_range(x, 10.0) + check_range(-x, 3.0)
        out = a.sum()
    except AssertionError:
        out = x.sum() * 0 - 1.0
    except ValueError:
        out = x.sum() * 0 - 2.0
    return out


def test_first_error_raised_wins_within_one_statement():
    # [1, 2]: the first call passes, the second fails (sum < 0): ValueError;
    # [-4, 1]: the first call fails (sum < 0) before the second's assertion would
    _same(two_checks, [[0.0, 0.0], [1.0, 2.0], [-4.0, 1.0], [5.0, 0.0]])


# -- sub-Layers ------------------------------------------------------------------------------

class Guarded(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        assert (h.abs() < 4.0).all(), "activations exploded"
        return rt.nn.functional.relu(h)


class Stack(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = rt.nn.LayerList([Guarded(), Guarded()])
        self.head = rt.nn.Linear(3, 1)

    def check(self, h):
        if rt.isnan(h).any():
            raise FloatingPointError("nan")
        return h

    def forward(self, x):
        try:
            h = self.check(x)
            for block in self.blocks:
                h = block(h)
            out = self.head(h)
            status = rt.zeros([1])
        except AssertionError:
            out = self.head(x) * 0.0
            status = rt.ones([1])
        except FloatingPointError:
            out = rt.zeros([x.shape[0], 1])
            status = rt.ones([1]) * 2.0
        return out, status


def test_sub_layer_forward_assertions_reach_the_except_of_the_whole_forward():
    rt.seed(3)
    net = Stack()
    rows = [[[0.1, 0.2, 0.3]], [[9.0, -9.0, 9.0]], [[np.nan, 0.0, 1.0]],
            [[0.5, -0.5, 0.1], [0.2, 0.2, 0.2]]]
    static = d2s.to_static(net)
    for row in rows:
        x = _t(row)
        for w, g in zip(net.forward(x), static(x), strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    statuses = [float(static(_t(r))[1].numpy()[0]) for r in rows[:3]]
    assert statuses == [0.0, 1.0, 2.0]


# -- loops -----------------------------------------------------------------------------------

def countdown(n):
    steps = rt.zeros([], "float32")
    while n > 0:
        n = n - 1.0
        steps = steps + 1.0
        if steps > 3:
            raise RuntimeError("too many steps")
    return steps


def loops(x):
    try:
        total = countdown(x.sum())
    except RuntimeError:
        total = rt.full([], -1.0, "float32")
    return total


def test_raise_inside_a_graph_loop_of_a_helper():
    _same(loops, [[1.0, 1.0], [3.0, 2.0], [0.0, -1.0]])


def per_row(x):
    results = []
    bad = 0.0
    try:
        for i in range(3):  # a Python loop calling a checking helper each time
            results.append(check_range(x[i], 5.0))
    except ValueError:
        bad = 1.0
    except AssertionError:
        bad = 2.0
    return rt.stack(results) if len(results) == 3 else x, bad


def test_helper_called_in_a_loop_of_the_try_body():
    _same(per_row, [[[1.0], [2.0], [3.0]], [[1.0], [-2.0], [3.0]], [[1.0], [2.0], [7.0]]])


# -- a Python-level raise in a helper called under a tensor `if` ------------------------------

def strict(h, flag):
    if flag:
        raise KeyError("strict mode")
    return h


def python_raise_in_branch(x, flag):
    try:
        if x.sum() > 0:
            y = strict(x, flag)
        else:
            y = -x
    except KeyError:
        y = x * 10
    return y


@pytest.mark.parametrize("flag", [False, True])
def test_python_level_raise_in_a_helper_under_a_tensor_if(flag):
    """Eager raises only when the branch runs: static too (the branch's error code)."""
    _same(python_raise_in_branch, [([1.0, 2.0], flag), ([-1.0, -2.0], flag)])


# -- what a clause does not catch still raises at run time -----------------------------------

def not_caught(x):
    try:
        y = check_range(x, 100.0)
    except KeyError:
        y = x
    return y


def test_uncaught_helper_error_is_raised_when_the_program_runs():
    static = d2s.to_static(not_caught)
    np.testing.assert_allclose(static(_t([1.0, 2.0])).numpy(), [2.0, 4.0])
    with pytest.raises(ValueError, match="negative total"):
        static(_t([-1.0, -2.0]))


def test_gradients_follow_the_path_taken():
    static = d2s.to_static(nested_helpers)
    from tests.finite_differences import numeric_grad
    for row in ([1.0, 0.5], [-1.0, -0.5]):
        x = _t(row)
        x.stop_gradient = False
        static(x)[0].sum().backward()
        want = numeric_grad(
            lambda a: float(nested_helpers(rt.to_tensor(a.astype("float64")))[0].sum().item()),
            np.asarray(row, "float64"), eps=1e-4)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


# -- a nested function, a @to_static function ----------------------------------------------

def with_inner(h):
    def inner(v):
        if v.sum() > 10:
            raise OverflowError("inner too big")
        return v * 2
    return inner(h) + 1


@d2s.to_static
def decorated_check(h):
    if h.sum() > 10:
        raise OverflowError("decorated too big")
    return h * 2


def calls_inner_and_decorated(x):
    try:
        y = with_inner(x)
        y = decorated_check(y)
    except OverflowError:
        y = x * 0 - 1
    return y


def test_nested_and_decorated_functions_reach_the_except():
    # passes; inner fails; inner passes and the decorated one fails
    _same(calls_inner_and_decorated, [[1.0, 1.0], [9.0, 9.0], [2.0, 2.0]])


def helper_in_while_test(x):
    try:
        n = x.sum()
        while check_range(n, 100.0).sum() < 10:
            n = n + 1
    except ValueError:
        n = x.sum() * 0
    return n


def test_helper_raise_in_a_while_test_reaches_the_except():
    # (converts since issue 12's while-test follow-up: tests/d2s/semantics/
    # test_try_while_tests.py) ends at once; counts up; negative sum: ValueError caught
    _same(helper_in_while_test, [[3.0, 4.0], [1.0, 2.0], [-1.0, -2.0]])


def check_only(h):
    if h.sum() > 3:
        raise OverflowError("big")


def check_in_a_loop(x):
    y = x
    try:
        for i in range(4):
            y = y + 1
            check_only(y)  # the last statement of the body: a failure leaves the loop
    except OverflowError:
        y = y * 10
    return y


def test_a_failing_check_call_ends_the_loop_of_the_body():
    _same(check_in_a_loop, [[0.1, 0.1], [1.0, 1.0], [-5.0, -5.0]])


def returns_the_call(x):
    try:
        return check_range(x, 100.0)
    except ValueError:
        pass  # falls through: the code after the `try` gives the result
    return x * 0 - 1


def test_return_of_a_failing_call_falls_through_to_the_except():
    """(was a silent wrong result: the `return` ran on the failing path too)"""
    _same(returns_the_call, [[1.0, 2.0], [-1.0, -2.0]])
