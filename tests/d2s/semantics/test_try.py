"""Item 2: `try` / `except` / `else` / `finally` around converted code.

Rules: the `try` statement runs while the function is converted (traced). Errors raised while
building the program (Python errors, shape errors) reach the `except` clauses exactly as in
eager mode, and `else` / `finally` run as Python runs them; a `try` body containing tensor
`if`s converts. A `raise` under a tensor condition inside a `try` with `except` would happen
when the program runs, after the `try` finished, so no `except` could catch it: that is a
`ConversionError` at the user's line, never a silently different control path."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def tensor_if_in_try(x):
    try:
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
    except ValueError:
        y = x * 0
    return y


def python_error_caught(x, d):
    k = 0
    try:
        scale = 4 / d
        if x.mean() > 0:
            x = x * scale
    except ZeroDivisionError:
        x = x - 1.0
    else:
        k = k + 1
    finally:
        k = k + 10
    return x, k


def shape_error_caught(x):
    try:
        y = x.reshape([3, 5])  # fails while building, as it fails eagerly
    except ValueError:
        y = x * 3
    if y.sum() > 0:
        y = y + 1
    return y


def _same(fn, inputs):
    static = d2s.to_static(fn)
    for args in inputs:
        args = [rt.to_tensor(np.asarray(a, "float32")) if isinstance(a, list) else a
                for a in args]
        want, got = fn(*args), static(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            np.testing.assert_allclose(np.asarray(g.numpy() if hasattr(g, "numpy") else g),
                                       np.asarray(w.numpy() if hasattr(w, "numpy") else w),
                                       rtol=1e-6)


def test_try_body_with_tensor_if_converts():
    _same(tensor_if_in_try, [([1.0, 2.0],), ([-1.0, -2.0],)])


@pytest.mark.parametrize("d", [0, 2])
def test_python_errors_reach_except_else_finally(d):
    _same(python_error_caught, [([1.0, 2.0], d), ([-1.0, -2.0], d)])


def test_build_time_error_reaches_except():
    _same(shape_error_caught, [([1.0, 2.0],), ([-1.0, -5.0],)])


def test_tensor_raise_inside_try_is_a_conversion_error():
    def f(x):
        try:
            if x.sum() > 0:
                raise ValueError("positive")
            y = x
        except ValueError:
            y = -x
        return y
    with pytest.raises(ConversionError, match="inside a `try` with `except`") as info:
        d2s.to_static(f)(rt.ones([2]))
    assert "test_try.py" in str(info.value)


def test_tensor_raise_after_try_is_a_run_time_check():
    def f(x):
        try:
            y = x * 2
        finally:
            y = y + 1
        if y.sum() > 10:
            raise OverflowError("too large")
        return y
    static = d2s.to_static(f)
    np.testing.assert_allclose(static(rt.ones([2])).numpy(), [3.0, 3.0])
    with pytest.raises(OverflowError, match="too large"):
        static(rt.full([2], 5.0))
