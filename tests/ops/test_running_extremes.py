"""`rt.cummax` / `rt.cummin` (scanned in one NumPy call) against a per-element Python
reference: a tie takes the later index, a NaN is kept from where it appears, any axis, ints
and floats, empty axes."""
from __future__ import annotations

import math

import numpy as np
import pytest

import runtime as rt


def _reference(row, larger):
    values, index = [], []
    for i, v in enumerate(row):
        if i == 0 or (v >= values[-1] if larger else v <= values[-1]) or math.isnan(v):
            values.append(v)
            index.append(i)
        else:
            values.append(values[-1])
            index.append(index[-1])
    return values, index


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape,axis", [((9,), 0), ((4, 7), 1), ((4, 7), 0), ((3, 5, 2), -2),
                                        ((2, 0), 1), ((0, 3), 0)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_running_extremes_match_the_element_by_element_reference(name, shape, axis, dtype):
    rng = np.random.default_rng(sum(shape) + len(name))
    x = rng.integers(-2, 3, shape).astype(dtype)  # (many ties)
    if dtype == "float32" and x.size > 5:
        x.flat[4] = np.nan
        x.flat[1] = -0.0
    values, index = getattr(rt, name)(rt.to_tensor(x), axis=axis)
    assert values.dtype == rt.to_tensor(x).dtype and index.dtype == rt.int64
    if x.size == 0:
        assert values.shape == index.shape == list(shape)
        return
    moved = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
    want_v, want_i = zip(*[_reference(list(r), name == "cummax") for r in moved])
    got_v = np.moveaxis(values.numpy(), axis, -1).reshape(moved.shape)
    got_i = np.moveaxis(index.numpy(), axis, -1).reshape(moved.shape)
    np.testing.assert_array_equal(got_v, np.array(want_v, dtype).reshape(moved.shape))
    assert got_i.tolist() == [list(r) for r in want_i]
