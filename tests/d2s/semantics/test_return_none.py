"""Item 3: a value on one path, None on another, chosen by a tensor condition, is a conversion
error at the user's line (never zeros that reach the user). Paths that all return stay fine,
and None chosen by a Python value stays Python."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def tail_if_without_else(x):
    if rt.mean(x) > 0:
        return x * 2


def explicit_none(x):
    if x.sum() > 0:
        return None
    return x


def loop_return_falls_through(x):
    for i in range(3):
        if x[i] > 0:
            return x[i]


def tensor_while_falls_through(x):
    while x.sum() < 10:
        if x.max() > 5:
            return x
        x = x + 1


def helper_falls_through(x):
    def pick(v):
        if v.mean() > 0:
            return v
    return pick(x) + 1


@pytest.mark.parametrize("fn", [loop_return_falls_through, tensor_while_falls_through])
def test_value_or_none_by_tensor_through_a_graph_loop_is_an_error_at_user_line(fn):
    static = d2s.to_static(fn)
    with pytest.raises(ConversionError, match="None on others|None on some runs") as info:
        static(rt.to_tensor(np.array([1.0, -2.0, 3.0], "float32")))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "test_return_none.py" in str(info.value) + notes
    assert "tensor" in str(info.value)


@pytest.mark.parametrize("fn", [tail_if_without_else, explicit_none, helper_falls_through])
def test_value_or_none_by_tensor_if_is_none_where_eager_is(fn):
    """(issue 35: was refused) one program gives eager's None on the runs that take the
    path without a value; using it there raises eager's error class."""
    static = d2s.to_static(fn)
    for v in ([1.0, -2.0, 3.0], [-1.0, -2.0, -3.0], [6.0, 1.0, 1.0]):
        x = rt.to_tensor(np.array(v, "float32"))
        try:
            want = fn(x)
        except TypeError as e:
            with pytest.raises(type(e)):
                static(x)
            continue
        got = static(x)
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert len(static.program_cache) == 1


def every_path_returns(x):
    for i in range(3):
        if x[i] > 0:
            return x[i] * 10
    return x.sum()


def while_true_returns(x):
    while True:
        x = x * 3
        if x.sum() > 100:
            return x


def python_none(x, skip):
    if skip:
        return None
    if x.mean() > 0:
        return x
    return -x


@pytest.mark.parametrize("fn,inputs", [
    (every_path_returns, [([-1.0, 2.0, 3.0],), ([-1.0, -2.0, -3.0],), ([4.0, 0.0, 0.0],)]),
    (while_true_returns, [([1.0, 1.0],), ([60.0, 60.0],)]),
    (python_none, [([1.0, 2.0], True), ([1.0, 2.0], False), ([-1.0, -2.0], False)]),
])
def test_paths_that_all_return_match_eager(fn, inputs):
    static = d2s.to_static(fn)
    for args in inputs:
        args = (rt.to_tensor(np.array(args[0], "float32")),) + tuple(args[1:])
        want, got = fn(*args), static(*args)
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
