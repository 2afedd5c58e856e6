"""A tensor whose dtype a graph loop's body changes (int32 accumulating float32 values): after
a run of the loop it has the body's dtype, as in eager code; where the loop ran zero times
eager code still has the old dtype, which one program cannot give, so reading the value
raises a TypeError naming the loop and the variable (never the other dtype, silently)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def accumulate(x, count_only):
    acc = rt.zeros([], "int32")
    steps = rt.zeros([], "int32")
    i = rt.zeros([], "int64")
    while i < x.sum():
        acc = acc + x[0]          # int32 + float32: float32 from the first iteration on
        steps = steps + 1         # int32 + a Python int: stays int32
        i += 1
    if count_only:
        return steps
    return acc, steps


def reference(x):
    acc, steps, i = 0, 0, 0
    while i < x.sum():
        acc, steps, i = acc + x[0], steps + 1, i + 1
    return np.float32(acc), steps


def test_dtype_after_the_loop_ran_is_the_bodys():
    static = d2s.to_static(accumulate)
    for data in ([1.0, 2.0], [0.5, 0.0], [2.5, 1.0]):
        want_acc, want_steps = reference(np.array(data, "float32"))
        for fn in (accumulate, static):
            acc, steps = fn(rt.to_tensor(data), False)
            assert acc.dtype == rt.float32 and steps.dtype == rt.int32
            np.testing.assert_allclose(acc.numpy(), want_acc, rtol=1e-6)
            assert steps.item() == want_steps


def test_zero_iterations_raise_where_eager_keeps_the_old_dtype():
    static = d2s.to_static(accumulate)
    x = rt.to_tensor([0.0, -1.0])
    acc, steps = accumulate(x, False)
    assert acc.dtype == rt.int32 and acc.item() == 0 and steps.item() == 0
    with pytest.raises(TypeError, match=r"'acc' is a tensor of dtype int32 before a loop .*"
                       r"test_loop_dtypes.py.*while i < x.sum\(\)"):
        static(x, False)
    # where the widened value is not read, eager's result
    assert static(x, True).item() == 0 and static(x, True).dtype == rt.int32
    np.testing.assert_allclose(static(rt.to_tensor([1.0, 0.5]), False)[0].numpy(), 2.0)
