"""Item 2: `try` / `except` / `else` / `finally` around converted code.

Rules: the `try` statement runs while the function is converted (traced). Errors raised while
building the program (Python errors, shape errors) reach the `except` clauses exactly as in
eager mode, and `else` / `finally` run as Python runs them; a `try` body containing tensor
`if`s converts. A `raise` (or `assert`) under a tensor condition inside a `try` body with
`except` clauses is an error the program raises when it runs: it reaches the first matching
`except` clause, skipping the rest of the body, then `finally`; an error no clause catches
is raised after `finally`."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError
from tests.finite_differences import numeric_grad


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


def _same(fn, inputs, static=None):
    static = static or d2s.to_static(fn)
    for args in inputs:
        args = [rt.to_tensor(np.asarray(a, "float32")) if isinstance(a, list) else a
                for a in args]
        want, got = fn(*args), static(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got, strict=True):
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


class BadRow(ValueError):
    pass


def _check_rows(x, limit):
    """A helper-like block with several run-time checks (user's own class among them)."""
    if rt.isnan(x).any():
        raise FloatingPointError("nan in input")
    if x.max() > limit:
        raise BadRow("row too large")
    return x


def clipped_loss(x):
    log = 0.0
    try:
        y = x * 2.0
        if rt.isnan(x).any():
            raise FloatingPointError("nan in input")
        if x.max() > 2.5:
            raise BadRow("too large")
        y = y + 1.0
    except ValueError as err:  # BadRow is a ValueError: caught here
        y = rt.clip(x, -2.5, 2.5)
        log = 1.0 if str(err) == "too large" else -1.0
    except FloatingPointError:
        y = rt.zeros_like(x)
        log = 2.0
    else:
        log = log + 10.0
    finally:
        log = log + 100.0
    return (y * y).sum(), log


RUN_TIME_INPUTS = [([1.0, 2.0],), ([1.0, 3.0],), ([np.nan, 0.0],), ([-4.0, 0.5],)]


def test_run_time_errors_reach_the_matching_except():
    """One program: no error (else + finally), a BadRow caught by `except ValueError as
    err`, a FloatingPointError by the second clause; `finally` on every path."""
    static = d2s.to_static(clipped_loss)
    _same(clipped_loss, RUN_TIME_INPUTS, static)
    assert len(static.program_cache) == 1
    text = str(static.concrete_program.main_program)
    assert "cond" in text and "raise" not in text  # every error is caught: no raise op left


def test_run_time_error_gradients_follow_the_path_taken():
    static = d2s.to_static(clipped_loss)
    for row in ([1.0, 2.0], [1.0, 3.0], [-4.0, 0.5]):
        x = rt.to_tensor(np.asarray(row, "float32"))
        x.stop_gradient = False
        static(x)[0].backward()
        want = numeric_grad(
            lambda a: float(clipped_loss(rt.to_tensor(a.astype("float64")))[0].item()),
            np.asarray(row, "float64"), eps=1e-4)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


def test_uncaught_run_time_error_is_raised_after_finally():
    def f(x):
        seen = 0.0
        try:
            if x.sum() > 0:
                raise KeyError("positive")
            y = x - 1.0
        except IndexError:
            y = x
        finally:
            seen = seen + 1.0
        return y, seen
    static = d2s.to_static(f)
    _same(f, [([-1.0, -2.0],)])
    with pytest.raises(KeyError, match="positive"):
        f(rt.ones([2]))
    with pytest.raises(KeyError, match="positive"):
        static(rt.ones([2]))
    text = str(static.concrete_program.main_program)
    assert "raise() {error='KeyError', message='positive'" in text and "test_try.py" in text


def test_checks_in_loops_asserts_and_nested_trys():
    def f(x):
        total = x.sum() * 0.0
        i = rt.zeros([], "int64")
        try:
            try:
                while i < x.shape[0]:
                    assert x[i] >= -1.0, "below -1"
                    if x[i] > 5.0:
                        raise OverflowError("row over 5")
                    total = total + x[i]
                    i = i + 1
            except AssertionError:
                total = total - 100.0
        except ArithmeticError:  # OverflowError, not caught by the inner clause
            total = total + 1000.0
        return total, i
    _same(f, [([1.0, 2.0, 3.0],), ([1.0, -2.0, 3.0],), ([1.0, 6.0, -3.0],)])


def test_bare_raise_in_handler_re_raises_at_run_time():
    class Layerish(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(2, 2)
            self.failures = 0

        def forward(self, x):
            try:
                h = self.fc(x)
                if h.abs().max() > 1e3:
                    raise RuntimeError("diverged")
            except RuntimeError:
                self.failures += 1  # Python side effect: runs once, while converting
                raise
            return h
    net = Layerish()
    static = d2s.to_static(net)
    x = rt.ones([1, 2])
    np.testing.assert_allclose(static(x).numpy(), net(x).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="diverged"):
        static(x * 1e6)


def _check_positive(h):
    if h.sum() < 0:
        raise ValueError("negative activations")
    return h


def test_run_time_raise_in_a_called_helper_reaches_the_except():
    """The helper's `raise` reaches the caller's `except` when the program runs (the helper
    is converted for the `try`: its error code goes to the caller); a clause that does not
    catch it leaves a run-time raise."""
    def f(x):
        try:
            y = _check_positive(x * 2)
        except ValueError:
            y = x * 0
        return y
    static = d2s.to_static(f)
    _same(f, [([1.0, 2.0],), ([-1.0, -2.0],)], static)
    assert len(static.program_cache) == 1

    def g(x):  # a clause that does not catch it: the helper's check stays a run-time raise
        try:
            y = _check_positive(x * 2)
        except KeyError:
            y = x * 0
        return y
    static = d2s.to_static(g)
    np.testing.assert_allclose(static(rt.ones([2])).numpy(), [2.0, 2.0])
    with pytest.raises(ValueError, match="negative activations"):
        static(-rt.ones([2]))


def test_except_as_name_needing_data_is_a_conversion_error():
    def f(x):
        try:
            if x.sum() > 0:
                raise ValueError("positive")
            if x.sum() < -3:
                raise ValueError("very negative")
            y = x
        except ValueError as e:
            y = x * len(str(e))
        return y
    with pytest.raises(ConversionError, match="may catch different run-time errors") as info:
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


def test_saved_model_dispatches_run_time_errors(tmp_path):
    import os
    static = d2s.to_static(clipped_loss)
    static(rt.ones([2]))
    prefix = os.path.join(str(tmp_path), "clipped")
    d2s.save(static, prefix, input_spec=[d2s.InputSpec([None])])
    loaded = d2s.load(prefix)
    for row in ([1.0, 2.0, 2.0], [1.0, 3.0, 0.0], [np.nan, 0.0, 1.0]):
        x = rt.to_tensor(np.asarray(row, "float32"))
        want = clipped_loss(x)
        got = loaded(x)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
        assert type(got[1]) is type(want[1]) is float  # a Python number, as eager's
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_returns_in_body_and_handlers_and_try_in_graph_loop():
    def early(x):
        try:
            if x.sum() < 0:
                raise ValueError("negative")
            return x * 2
        except ValueError:
            return -x

    def per_row(x):
        i = rt.zeros([], "int64")
        s = x[0] * 0
        while i < x.shape[0]:
            try:
                if x[i] < 0:
                    raise ValueError("negative row")
                s = s + x[i]
            except ValueError:
                s = s - 100.0
            i = i + 1
        return s
    rows = [([1.0, 2.0, 3.0],), ([-1.0, 0.5, 2.0],), ([-9.0, -2.0, -1.0],)]
    _same(early, rows)
    _same(per_row, rows)
