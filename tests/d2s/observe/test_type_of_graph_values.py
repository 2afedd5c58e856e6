"""`type()` and `hasattr()` in converted code give eager's answers (issue 33): a tensor the
program computes is a `Tensor` (not the program's Variable), `float(t)` a `float`, and a value
that is None or a Python number on some runs only answers `hasattr` per run, and its `type()`
compared (`is`, `==`, `in`) or named (`__name__`) is the run's (`run_types`)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as paddle
from tests.d2s.observe_wild.helpers import assert_same_leaves

XS = [np.array([1.0, 2.0, 0.5], "float32"), np.array([-1.0, -3.0, 0.5], "float32")]


def _scale_if_tensor(v, k):
    if type(v) is paddle.Tensor:  # a helper dispatching on the class, as library code does
        return v * k
    return v


def dispatch(x):
    h = _scale_if_tensor(x * 1.0, 3.0)
    m = float(h.mean())
    n = int((h > 0).sum())
    return h, type(m).__name__, type(n) is int, type(bool(n > 1)).__name__, m


def optional_bias(x):
    bias = None
    if x.mean() > 0:
        bias = x * 2.0
    out = x + 1.0
    if hasattr(bias, "shape"):  # eager: False where bias is None
        out = out + bias
    return out


def counted(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2.0
    has_item = hasattr(b, "item")
    return has_item, hasattr(float(x.sum()), "item"), hasattr(b, "real")


def type_of_mixed(x):
    b = None
    if x.mean() > 0:
        b = x * 2.0
    return type(b).__name__


@pytest.mark.parametrize("fn", [dispatch, optional_bias, counted])
def test_type_and_hasattr_as_eager_over_both_paths(fn):
    static = d2s.to_static(fn)
    for x in XS:
        assert_same_leaves(static(paddle.to_tensor(x)), fn(paddle.to_tensor(x)))  # (types,
        # dtypes, shapes, stop_gradient, values)
    assert static.program_cache.traces == 1


def test_values_against_numpy():
    static = d2s.to_static(optional_bias)
    for x in XS:
        want = x + 1.0 + (2.0 * x if x.mean() > 0 else 0.0)
        np.testing.assert_allclose(static(paddle.to_tensor(x)).numpy(), want)
    h, m_type, n_is_int, b_type, m = d2s.to_static(dispatch)(paddle.to_tensor(XS[1]))
    np.testing.assert_allclose(h.numpy(), XS[1] * 3.0)
    assert (m_type, n_is_int, b_type) == ("float", True, "bool") and type(m) is float


def test_type_name_of_a_value_none_on_some_runs_is_the_runs():
    static = d2s.to_static(type_of_mixed)  # (was a ConversionError: `run_types`)
    for x in XS:
        assert_same_leaves(static(paddle.to_tensor(x)), type_of_mixed(paddle.to_tensor(x)))
    assert {static(paddle.to_tensor(x)) for x in XS} == {"NoneType", "Tensor"}
