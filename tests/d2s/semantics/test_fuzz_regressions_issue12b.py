"""Programs the extended control-flow fuzzer (helpers in `try`, walrus values, comprehension
filters; `python -m tests.fuzz.test_fuzz_control 500`) found failing, kept as regression
tests.

- a name bound in one branch of an inner tensor `if`, handed out of an outer one (was a
  ValueError from the read check's flag living in the inner block; also on main);
- an early return from a loop under a tensor condition whose returned number is float32 on
  one path and float64 on the other (eager keeps each path's dtype): the run's path's dtype
  (was a bare `OpTypeError` from `cond`, counted as internal; then a `ConversionError`)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def return_dtype_by_path(x):
    y = x * 1.0
    k = rt.zeros([], "float32")
    for j in range(3):
        if x[j] > 2.0:
            return y * (j + 1), k + j
    ok = y.sum() > 4.0 and (m := y.mean() * 2.0) > -2.0
    return y + 1.0, k + rt.cast(ok, "float64")


ROWS = [([-0.25, -3.0, 3.0, -0.25], "float32"), ([1.25, 1.0, 1.5, 2.0], "float64"),
        ([-1.0, -1.0, -1.0, -1.0], "float64")]


@pytest.mark.parametrize("row,dtype", ROWS)
def test_return_dtype_decided_by_data_is_the_path_s(row, dtype):
    """Was a `ConversionError` naming the dtypes; the call now gives the run's path's dtype
    (`operators/branch_dtypes.py`), with one program for every path."""
    converted = d2s.to_static(return_dtype_by_path)
    for other, _ in ROWS:  # (the other paths first: one program serves all)
        converted(rt.to_tensor(np.asarray(other, "float32")))
    x = rt.to_tensor(np.asarray(row, "float32"))
    want = return_dtype_by_path(x)
    got = converted(x)
    assert str(want[1].dtype).endswith(dtype) and got[1].dtype == want[1].dtype
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert len(converted.program_cache) == 1


def test_same_dtype_on_every_path_converts():
    def f(x):
        y = x * 1.0
        k = rt.zeros([], "float32")
        for j in range(3):
            if x[j] > 2.0:
                return y * (j + 1), k + j
        ok = y.sum() > 4.0 and (m := y.mean() * 2.0) > -2.0
        return y + m, k + rt.cast(ok, "float32")
    static = d2s.to_static(f)
    for row in ([-0.25, -3.0, 3.0, -0.25], [1.0, 1.0, 1.0, 1.0], [3.0, 0.0, 0.0, 0.0],
                [-1.0, -1.0, -1.0, -1.0]):
        x = rt.to_tensor(np.asarray(row, "float32"))
        try:
            want = f(x)
        except UnboundLocalError:
            with pytest.raises(UnboundLocalError):
                static(x)
            continue
        got = static(x)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def bound_in_a_nested_branch(x):
    y = x * 1.0
    if x.sum() > 0:
        if x.mean() > 1:
            m = x * 2
        y = y + 1
    else:
        m = x * 3
    return y + m


def bound_in_the_other_nested_branch(x):
    y = x * 1.0
    if x.sum() > 0:
        m = x * 3
    else:
        if x.mean() < -1:
            m = x * 2
        y = y + 1
    return y + m


@pytest.mark.parametrize("fn", [bound_in_a_nested_branch, bound_in_the_other_nested_branch])
def test_name_bound_in_a_nested_branch_is_checked_where_read(fn):
    """A value unbound on some paths of an inner tensor `if`, handed out of the outer one:
    its bound flag is an output of the outer `cond` (was a ValueError: the flag lived in the
    inner block). Static raises UnboundLocalError exactly where eager does."""
    static = d2s.to_static(fn)
    for row in ([1.0, 2.0], [0.5, 0.2], [-1.0, -1.0], [-3.0, -1.0], [-0.5, -0.2]):
        x = rt.to_tensor(np.asarray(row, "float32"))
        try:
            want = fn(x)
        except UnboundLocalError:
            with pytest.raises(UnboundLocalError, match="'m'"):
                static(x)
            continue
        np.testing.assert_allclose(static(x).numpy(), want.numpy())
    assert len(static.program_cache) == 1
