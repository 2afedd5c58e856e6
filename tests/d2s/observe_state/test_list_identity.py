"""`insert`, `clear`, `pop` and `append` change a list in place in converted code too, also
where the list is a tensor array (its length depends on a tensor): every name bound to the
list sees each change, and a loop that carries the list both by its name and as an object its
body changes reads one value. Nested tensor `while` loops that `insert(0, ...)` and `pop(0)`
on one list gave other values than eager code before (issue 33)."""
import math

import numpy as np
import pytest

import d2s
import runtime as rt


def queue_in_nested_loops(x, first):
    nums = [first(3), first(1)]
    h = x * 1.0
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.insert(0, first(5))
        j = rt.zeros([])
        while j < x[1]:
            j = j + 1.0
            if len(nums) > 1:
                h = h + nums.pop(0)
            nums.insert(0, first(1))
    return h, len(nums), sum(nums)


def cleared_in_nested_loops(x):
    nums = [rt.to_tensor(3.0), rt.to_tensor(1.0)]
    h = x * 1.0
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.append(rt.to_tensor(5.0))
        j = rt.zeros([])
        while j < x[1]:
            j = j + 1.0
            h = h + nums.pop(0)
            nums.clear()
            nums.append(rt.to_tensor(2.0))
    return h, len(nums)


def changed_through_alias(x):
    nums = [1, 2]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.append(4)
    alias = nums
    if x[1] > 0:
        nums.insert(0, 7)
    else:
        nums.clear()
    return len(alias), sum(alias), len(nums)


def _trips(v: float) -> int:
    """How often `k = 0; while k < v: k += 1` runs."""
    return max(0, math.ceil(v))


def queue_reference(x):
    nums, h = [3.0, 1.0], np.array(x, "float32")
    for _ in range(_trips(x[0])):
        nums.insert(0, 5.0)
        for _ in range(_trips(x[1])):
            if len(nums) > 1:
                h = h + nums.pop(0)
            nums.insert(0, 1.0)
    return h, len(nums), sum(nums)


def cleared_reference(x):
    nums, h = [3.0, 1.0], np.array(x, "float32")
    for _ in range(_trips(x[0])):
        nums.append(5.0)
        for _ in range(_trips(x[1])):
            h = h + nums.pop(0)
            nums = [2.0]
    return h, len(nums)


def alias_reference(x):
    nums = [1, 2] + [4] * _trips(x[0])
    nums = [7, *nums] if x[1] > 0 else []
    return len(nums), sum(nums), len(nums)


# (outer trips, inner trips): (2, 2), (0, -), (3, 1), (1, 0)
INPUTS = [[1.25, 1.5, 0.5], [-0.5, 2.0, 1.0], [2.5, 0.75, -1.0], [0.5, -1.0, 2.0]]


def _plain(values) -> list:
    return [v.numpy() if isinstance(v, rt.Tensor) else v for v in values]


def _assert_same(got, want, types=True):
    got, want = _plain(got), _plain(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if types:
            assert type(g) is type(w), (g, w)
        np.testing.assert_allclose(np.asarray(g, "float64"), np.asarray(w, "float64"))


@pytest.mark.parametrize("first", [rt.to_tensor, int], ids=["tensors", "ints"])
def test_insert_and_pop_front_in_nested_tensor_loops(first):
    static = d2s.to_static(queue_in_nested_loops)
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        eager = queue_in_nested_loops(x, first)
        _assert_same(static(x, first), eager)
        _assert_same(eager, queue_reference(data), types=False)


def test_clear_in_nested_tensor_loops():
    static = d2s.to_static(cleared_in_nested_loops)
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        eager = cleared_in_nested_loops(x)
        _assert_same(static(x), eager)
        _assert_same(eager, cleared_reference(data), types=False)


def test_insert_and_clear_seen_through_another_name():
    static = d2s.to_static(changed_through_alias)
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        eager = changed_through_alias(x)
        _assert_same(static(x), eager)
        _assert_same(eager, alias_reference(data))
