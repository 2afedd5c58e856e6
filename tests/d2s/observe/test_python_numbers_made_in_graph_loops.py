"""Python numbers and errors made by converted code are what eager makes (issue 33): a bare
`raise` in an `except` clause that may catch different run-time errors re-raises the run's
error (was refused with a message about `except ... as name`). Eager vs converted vs the
expected outcome, over inputs that take different paths through one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class Tracker:
    def __init__(self):
        self.failures = 0


def checked_scale(x, limit, tracker):
    """A guard as training scripts write it: count the failure, then re-raise it."""
    try:
        h = x * 2
        if h.sum() > limit:
            raise ValueError("activation sum too large")
        if h.min() < limit - 200:
            raise OverflowError("activation too small")
    except (ValueError, ArithmeticError):
        tracker.failures += 1
        raise
    return h


def _outcome(fn, x, limit):
    tracker = Tracker()
    try:
        out = fn(x, rt.to_tensor(limit), tracker)
    except Exception as e:  # noqa: BLE001  (the outcome compared)
        return type(e), str(e), e.__context__, tracker.failures
    return out.numpy(), tracker.failures


@pytest.mark.parametrize("limit,want", [
    (100.0, (ValueError, "activation sum too large", None, 1)),
    (-100.0, (ValueError, "activation sum too large", None, 1)),
    (1000.0, (OverflowError, "activation too small", None, 1)),
])
def test_bare_raise_re_raises_the_run_s_error(limit, want):
    x = rt.to_tensor(np.arange(12, dtype="float32").reshape(4, 3))
    converted = d2s.to_static(checked_scale)
    assert _outcome(checked_scale, x, limit) == want
    for _ in range(2):
        assert _outcome(converted, x, limit) == want
    assert len(converted.program_cache) == 1


def test_bare_raise_not_reached_returns_the_value():
    x = rt.to_tensor(np.arange(12, dtype="float32").reshape(4, 3) - 20)
    converted = d2s.to_static(checked_scale)
    for fn in (checked_scale, converted):
        value, failures = _outcome(fn, x, 10.0)
        np.testing.assert_array_equal(value, (np.arange(12).reshape(4, 3) - 20) * 2)
        assert failures == 0
