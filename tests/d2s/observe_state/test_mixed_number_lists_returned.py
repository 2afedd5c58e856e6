"""A list of Python numbers that holds ints beside floats (`[0.25, 2]`) and that a graph loop
grows is an array of `[value, kind]` pairs in the program (`runtime/ops/array_number_kinds.py`):
returning the list, or an item read from it, gives eager's types (it was a ConversionError, and
before that a silent `2.0` for eager's `2`); the list used inside the function (a sum with a
float, its length, arithmetic with tensors) converts with eager's values."""
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


@pytest.mark.parametrize("fn", [grown, second_item])
def test_returning_it_or_its_items_gives_eagers_types(fn):
    static = d2s.to_static(fn)
    for v in (2.0, 0.0, 1.0):  # 2, 0 and 1 trips through one program
        want = {grown: [0.25, 2] + [1.5] * int(v), second_item: 3}[fn]
        eager, got = fn(rt.to_tensor([v])), static(rt.to_tensor([v]))
        eager, got, want = ([w] if not isinstance(w, list) else w for w in (eager, got, want))
        assert len(eager) == len(got) == len(want)
        assert eager == got == want
        assert [type(a) for a in got] == [type(a) for a in want]
    assert len(static.program_cache) == 1


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
