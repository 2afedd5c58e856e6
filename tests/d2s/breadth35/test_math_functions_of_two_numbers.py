"""`math.isclose`, `math.hypot`, `math.atan2` and `math.log(v, base)` of Python numbers the
program computes (`.item()`, `float(t)`) convert: Python's bool or float, the branch they
decide taken when the program runs, and Python's errors (`math.log(v, 1)`:
ZeroDivisionError, `math.log(-1, 2)`: ValueError) raised at the user's line. Before, each was
refused with a generic "float() of a tensor" error."""
from __future__ import annotations

import math

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line, shown


def converge_step(x, target):
    """A solver's convergence test on Python floats, and polar coordinates of two of them."""
    s = x.sum().item()
    peak = float(x.max())
    done = math.isclose(s, target, rel_tol=1e-3, abs_tol=1e-6)
    radius, angle = math.hypot(s, peak), math.atan2(s, peak)
    if done:
        return x * 0, done, radius, angle
    return x * radius, done, radius, angle


def _ref(x, target):
    s, peak = float(x.sum(dtype=np.float32)), float(x.max())
    done = math.isclose(s, target, rel_tol=1e-3, abs_tol=1e-6)
    radius, angle = math.hypot(s, peak), math.atan2(s, peak)
    return (x * 0 if done else (x * np.float32(radius))), done, radius, angle


@pytest.mark.parametrize("data", [[1.0, 2.0], [0.5, -0.5], [1e-8, -1e-8], [3.0, 0.0005]])
def test_isclose_hypot_atan2_of_computed_numbers(data):
    converted = d2s.to_static(converge_step)
    x = np.array(data, np.float32)
    eager = converge_step(rt.to_tensor(x), 3.0)
    static = converted(rt.to_tensor(x), 3.0)
    ref = _ref(x, 3.0)
    np.testing.assert_allclose(static[0].numpy(), ref[0], rtol=1e-6)
    np.testing.assert_allclose(static[0].numpy(), eager[0].numpy(), rtol=1e-6)
    assert static[1:] == eager[1:] == ref[1:]  # (the same Python numbers, exactly)
    assert [type(v) for v in static[1:]] == [bool, float, float]


def log_base(x):
    return math.log(x.sum().item(), x.max().item())


@pytest.mark.parametrize("data, error", [
    ([4.0, 2.0], None), ([1.0, 1.0], ZeroDivisionError), ([-3.0, 1.0], ValueError)])
def test_log_with_a_computed_base(data, error):
    converted = d2s.to_static(log_base)
    x = rt.to_tensor(np.array(data, np.float32))
    if error is None:
        assert converted(x) == log_base(x) == math.log(sum(data), max(data))
        return
    with pytest.raises(error) as eager:
        log_base(x)
    with pytest.raises(error) as info:
        converted(x)
    assert shown(info.value).splitlines()[0].endswith(str(eager.value))
    assert_at_user_line(info.value, __file__, log_base.__code__.co_firstlineno + 1)


def wrapped_phase(x):
    return math.fmod(x[0].item(), x[1].item())


@pytest.mark.parametrize("data", [[3.5, 2.0], [-3.5, 2.0], [3.5, -2.0], [-4.0, 2.0],
                                  [1e10 + 0.3, 0.7], [1.0, 0.0]])
def test_fmod_of_computed_numbers(data):
    converted = d2s.to_static(wrapped_phase)
    x = rt.to_tensor(np.array(data, np.float64))
    if data[1] == 0:
        with pytest.raises(ValueError, match="math domain error"):
            converted(x)
        return
    got, want = converted(x), wrapped_phase(x)
    assert got == want == math.fmod(*data) and type(got) is float
    assert math.copysign(1.0, got) == math.copysign(1.0, want)  # (-0.0 of fmod(-4, 2))
