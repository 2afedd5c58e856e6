"""A list of Python numbers that holds ints beside floats (`[0.25, 2]`) and that a graph loop
grows is one float array in the program: which items are ints, as eager code has them, only
the run decides. Returning the list, or an item read from it, is a ConversionError (was a
silent `2.0` for eager's `2`); the list used inside the function (a sum with a float, its
length, arithmetic with tensors) still converts with eager's values."""
import numpy as np
import pytest

import d2s
import runtime as rt


def grown(x):
    nums = [0.25, 2]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.append(1.5)
    return nums


def second_item(x):
    nums = [0.25, 2]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.append(1.5)
    return nums[1] + 1


def used_inside(x):
    nums = [0.25, 2]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.append(1.5)
    return x * nums[1] + sum(nums), len(nums)


@pytest.mark.parametrize("fn, eager_types", [(grown, [float, int]), (second_item, [int])])
def test_returning_it_or_its_items_is_refused(fn, eager_types):
    out = fn(rt.to_tensor([2.0]))
    got = out[:2] if isinstance(out, list) else [out]
    assert [type(v) for v in got] == eager_types
    with pytest.raises(d2s.ConversionError, match="ints beside floats") as info:
        d2s.to_static(fn)(rt.to_tensor([2.0]))
    assert "float(v)" in str(info.value)


def test_used_inside_the_function_it_converts():
    static = d2s.to_static(used_inside)
    for v in (2.0, 0.0, 1.0):
        x = rt.to_tensor([v])
        (want, n_want), (got, n_got) = used_inside(x), static(x)
        trips = int(np.ceil(max(v, 0.0)))
        assert n_want == n_got == 2 + trips and type(n_got) is int
        np.testing.assert_allclose(got.numpy(), want.numpy())
        assert (got.dtype, got.stop_gradient) == (want.dtype, want.stop_gradient)
        np.testing.assert_allclose(got.numpy(), v * 2 + 2.25 + 1.5 * trips, rtol=1e-6)
    assert len(static.program_cache) == 1
