"""`math.isfinite` / `isnan` / `isinf` / `log2` / `log10` of numbers a training step logs
(`loss.item()`, `float(grad_norm)`): eager code gets Python bools and floats; the converted
call raised `TypeError: float() of a tensor computed by the converted code` (a NaN guard
before logging is common in training loops). One program for finite, NaN and infinite
values; eager vs static vs Python's `math` on NumPy's numbers; a domain error (log10 of a
non-positive number) is Python's `ValueError`, raised when the program runs."""
import math

import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import assert_same_leaves


def log_metrics(loss, grad_norm):
    v = loss.item()
    finite = math.isfinite(v)
    if not math.isfinite(grad_norm.item()):           # a tensor if: 0.0 where it overflowed
        gn = 0.0
    else:
        gn = float(grad_norm)
    return {"loss": v if finite else -1.0, "finite": finite, "nan": math.isnan(v),
            "inf": math.isinf(gn), "bits": math.log2(abs(v) + 1.0),
            "db": 10 * math.log10(gn + 1e-3)}


def _reference(a, b):
    v, g = float(np.float32(a)), float(np.float32(b))
    gn = g if math.isfinite(g) else 0.0
    return {"loss": v if math.isfinite(v) else -1.0, "finite": math.isfinite(v),
            "nan": math.isnan(v), "inf": math.isinf(gn), "bits": math.log2(abs(v) + 1.0),
            "db": 10 * math.log10(gn + 1e-3)}


def test_finite_checks_give_eager_python_numbers():
    static = d2s.to_static(log_metrics)
    for a, b in ((1.5, 2.0), (np.nan, 3.0), (np.inf, np.inf), (2.0, np.nan)):
        args = rt.to_tensor(np.float32(a)), rt.to_tensor(np.float32(b))
        want = log_metrics(*args)
        assert_same_leaves(want, _reference(a, b), rtol=1e-12, atol=1e-12)
        assert_same_leaves(static(*args), want, rtol=1e-12, atol=1e-12)
    assert len(static.program_cache) == 1


def decibels(power):
    return 10.0 * math.log10(power.item())


def test_a_domain_error_of_log10_is_raised_when_the_program_runs():
    static = d2s.to_static(decibels)
    assert_same_leaves(static(rt.to_tensor(100.0)), 20.0)
    for fn in (decibels, static):
        with pytest.raises(ValueError, match="math domain error"):
            fn(rt.to_tensor(0.0))
