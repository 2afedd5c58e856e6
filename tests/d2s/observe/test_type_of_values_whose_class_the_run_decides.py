"""`type(v)` of a value whose Python class a tensor decides: an int on one path and a float
on another (`scale = 1` / `scale = x.max().item()`), a Python float or a NumPy scalar
(`1.5` / `np.float32(...)`, `float(t)` / `t.numpy().sum()`), a tensor or a Python number.
`type(v) is float`, `is not`, `==`, `in (int, bool)` and `type(v).__name__` are eager's on
each run through one program, and so are the value and its Python type. Before: a
ConversionError ("one program cannot give a Python class chosen when it runs"), and an
`OpTypeError` from `cond` for a NumPy scalar constant beside a Python float. Calling the
class (`type(v)(3)`) stays refused at the line."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

ROWS = ([1.0, 2.0, 3.0], [3.0, -2.0, -3.0], [-1.0, 5.0, -9.0], [-1.0, 1.0, -9.0])


def _x(row):
    return rt.to_tensor(np.asarray(row, "float32"))


def _same_on_every_row(fn):
    static = d2s.to_static(fn)
    seen = set()
    for row in ROWS:
        got, want = static(_x(row)), fn(_x(row))
        assert_same_leaves(got, want, f"row {row}")
        seen.add(repr(want))
    assert len(seen) > 1 and len(static.program_cache) == 1  # (paths differ: one program)


def lr_scale(x):
    """A scheduler helper: an int factor by default, the measured float where warm."""
    scale = x.max().item() if x.mean() > 0 else 1
    kind = type(scale).__name__
    if type(scale) is float:
        scale = scale * 2
    return kind, scale, type(scale) in (int, bool), type(scale) == float


def numpy_stat(x):
    """A metric that is a NumPy scalar from `.numpy()` on one path, a Python float on the
    other (a logger then dispatches on the class)."""
    v = x.numpy().sum() if x.sum() > 0 else 0.0
    return v, type(v) is np.float32, type(v) is not float, type(v).__name__


def numpy_constant(x):
    v = 1.5 if x.mean() > 0 else np.float32(2.0)
    return v, type(v).__name__


def numpy_ints(x):
    """NumPy ints on both paths (a stride picked from a config read with NumPy): eager's
    values and class, which stays the NumPy one (was an OpTypeError from `cond`)."""
    k = np.int64(2) if x.mean() > 0 else np.int64(3)
    return x * k, k, type(k).__name__


def two_decided(x):
    """Two values whose classes the run decides, compared with each other and either way
    round (`float is type(a)`)."""
    a = 1 if x.mean() > 0 else 2.5
    b = 3 if x.max() > 2 else 4.5
    return type(a) is type(b), float is type(a), type(a) is not type(b), type(a) == type(b)


def loss_or_zero(x):
    loss = x.mean() if x.sum() > 0 else 0.0
    return type(loss).__name__, type(loss) is rt.Tensor


@pytest.mark.parametrize("fn", [lr_scale, numpy_stat, numpy_constant, numpy_ints,
                                two_decided, loss_or_zero])
def test_type_of_a_value_whose_class_the_run_decides(fn):
    _same_on_every_row(fn)


def make_like(x):
    v = 1 if x.mean() > 0 else 2.5
    return type(v)(3)


def test_calling_the_class_stays_refused_at_the_line():
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(make_like)(_x(ROWS[0]))
    text = str(info.value)
    assert "return type(v)(3)" in text and "Variable" not in text
