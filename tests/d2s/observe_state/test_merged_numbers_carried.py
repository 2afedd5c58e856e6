"""A list of Python ints whose items a tensor `if` or a graph loop made program values (a list
of numbers, not of tensors, in eager code) stays one through every later graph op that carries
it: a loop body's parameter, a loop's output written back to the list object, a tensor `if`
whose branches pop from it. `sum()` of it is an `int`, as eagerly, not a 0-d int64 Tensor
(issue 33; the observe fuzzer's seed 17010). Each function runs converted once, on inputs that
take different paths through one program, against a plain-Python reference."""
import math

import pytest

import d2s
import runtime as rt


def _trips(v: float) -> int:
    return max(0, math.ceil(v))


def kept_length_then_grown_then_popped(x, y):
    # the first loop keeps the length (a Python list of loop-carried ints), the second grows
    # it in an inner loop, the third pops under a tensor `if`
    nums = [3, 1]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.insert(0, 5)
        nums.pop()
    for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        j = rt.zeros([])
        while j < rt.abs(x[0]) + 0.5:
            j = j + 1.0
            nums.append(1)
    k = rt.zeros([])
    while k < rt.abs(x[0]) + 0.5:
        k = k + 1.0
        if y[0] > x[1]:  # noqa: SIM102  (two tensor `if`s nested, as the fuzzer wrote)
            if len(nums) > 1:
                nums.pop()
    return sum(nums), len(nums)


def kept_length_then_grown_then_popped_reference(v, w):
    nums = [5, 5] if _trips(v[0]) >= 2 else [5, 3] if _trips(v[0]) == 1 else [3, 1]
    inner = _trips(abs(v[0]) + 0.5)
    nums += [1] * (inner * int(min(max(v[1] + 1.0, 0.0), 3.0)))
    if w[0] > v[1]:
        nums = nums[:max(1, len(nums) - inner)]
    return sum(nums), len(nums)


def merged_grown_then_popped_under_a_tensor_if(x, y):
    nums = [3, 1]
    if x[0] > 0.0:
        nums[0] = 5
    k = rt.zeros([])
    while k < rt.abs(x[1]):
        k = k + 1.0
        nums.append(2)
    if y[0] > 0.0:
        nums.pop()
    return sum(nums), len(nums), nums


def merged_grown_then_popped_under_a_tensor_if_reference(v, w):
    nums = [5 if v[0] > 0.0 else 3, 1] + [2] * _trips(abs(v[1]))
    if w[0] > 0.0:
        nums.pop()
    return sum(nums), len(nums), nums


INPUTS = [([1.25, 2.75, 1.25], [-0.25, -1.25, -1.25]),
          ([-1.25, -0.25, -0.75], [0.75, 0.75, 1.25]),
          ([1.25, 0.25, -2.75], [1.25, 2.25, 1.25]),
          ([2.25, -0.25, 0.25], [0.25, -0.25, 0.25])]
CASES = [(kept_length_then_grown_then_popped, kept_length_then_grown_then_popped_reference),
         (merged_grown_then_popped_under_a_tensor_if,
          merged_grown_then_popped_under_a_tensor_if_reference)]


def _types(v):
    return tuple(_types(a) for a in v) if isinstance(v, (tuple, list)) else type(v)


@pytest.mark.parametrize(("fn", "reference"), CASES, ids=[c[0].__name__ for c in CASES])
def test_sum_of_carried_python_ints_is_an_int(fn, reference):
    static = d2s.to_static(fn)
    for v, w in INPUTS:
        expected = reference(v, w)
        eager = fn(rt.to_tensor(v), rt.to_tensor(w))
        converted = static(rt.to_tensor(v), rt.to_tensor(w))
        assert eager == expected and _types(eager) == _types(expected), (v, w, eager)
        assert converted == expected, (v, w, converted)
        assert _types(converted) == _types(expected), (v, w, converted)
    assert len(static.program_cache) == 1  # (one program for every path)
