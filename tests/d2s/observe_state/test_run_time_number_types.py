"""The Python type of a returned number that the run decides (issue 33): `sum()` of a list of
Python floats that only an untaken branch of a tensor `if`, or a graph loop that ran zero
times, fills is eager's int `0` (the start value), a float where an item was kept; the same
after arithmetic, through a `return` inside a tensor `if`, for ints a tensor `if` merged and a graph loop then
grew (an int, not a 0-d Tensor), and for a number that is an int on
one path of a tensor `if` and a float on the other. Each function runs converted once, on
inputs that take different paths through one program, against a plain-Python reference."""
import math

import pytest

import d2s
import runtime as rt


def filled_by_a_branch(x):
    lengths = []
    if rt.mean(x) > 0.0:
        lengths.append(1.5)
        lengths.append(0.25)
    return sum(lengths), len(lengths)


def filled_by_a_loop(x):
    lengths = []
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.append(0.5)
    return sum(lengths) * 2 + 1, len(lengths)


def returned_inside_a_tensor_if(x):
    lengths = []
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.append(0.5)
    if x[1] > 0.0:
        return sum(lengths)
    return sum(lengths) + 1


def appended_in_the_returning_branch(x):
    lengths = []
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.append(0.5)
    if x[1] > 0.0:
        lengths.append(0.25)
        return sum(lengths)
    return sum(lengths)


def merged_then_grown(x):
    nums = [3, 1]
    if x[0] > 0:
        nums[0] = 5
    k = rt.zeros([])
    while k < x[1]:
        k = k + 1.0
        nums.insert(0, 2)
    return sum(nums), len(nums)


def int_or_float_by_branch(x):
    if rt.mean(x) > 0.0:
        n = 3
    else:
        n = 0.5
    return n, n * 2


def _trips(v: float) -> int:
    return max(0, math.ceil(v))


def filled_by_a_branch_reference(v):
    lengths = [1.5, 0.25] if sum(v) > 0 else []
    return sum(lengths), len(lengths)


def filled_by_a_loop_reference(v):
    lengths = [0.5] * _trips(v[0])
    return sum(lengths) * 2 + 1, len(lengths)


def returned_inside_a_tensor_if_reference(v):
    total = sum([0.5] * _trips(v[0]))
    return total if v[1] > 0 else total + 1


def appended_in_the_returning_branch_reference(v):
    lengths = [0.5] * _trips(v[0]) + ([0.25] if v[1] > 0 else [])
    return sum(lengths)


def merged_then_grown_reference(v):
    nums = [2] * _trips(v[1]) + [5 if v[0] > 0 else 3, 1]
    return sum(nums), len(nums)


def int_or_float_by_branch_reference(v):
    n = 3 if sum(v) > 0 else 0.5
    return n, n * 2


INPUTS = ([1.5, 2.0, 0.5], [-1.0, -2.0, -0.5], [2.0, -1.0, 0.5], [-1.0, 1.0, -3.0])
CASES = [(filled_by_a_branch, filled_by_a_branch_reference),
         (filled_by_a_loop, filled_by_a_loop_reference),
         (returned_inside_a_tensor_if, returned_inside_a_tensor_if_reference),
         (appended_in_the_returning_branch, appended_in_the_returning_branch_reference),
         (merged_then_grown, merged_then_grown_reference),
         (int_or_float_by_branch, int_or_float_by_branch_reference)]


def _types(v):
    return tuple(type(a) for a in v) if isinstance(v, tuple) else type(v)


@pytest.mark.parametrize(("fn", "reference"), CASES, ids=[c[0].__name__ for c in CASES])
def test_the_run_decides_the_python_type(fn, reference):
    static = d2s.to_static(fn)
    for v in INPUTS:
        expected = reference(v)
        eager = fn(rt.to_tensor(v))
        converted = static(rt.to_tensor(v))
        assert eager == expected and _types(eager) == _types(expected), v
        assert converted == expected, v
        assert _types(converted) == _types(expected), (v, converted)
    assert len(static.program_cache) == 1  # (one program for every path)


def merged_twice(x):
    lengths = []
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.append(0.5)
    total = 0
    if x[1] > 0.0:
        if x[2] > 0.0:
            total = sum(lengths)
        else:
            total = 2
    return total


def test_a_type_decided_in_a_nested_branch_leaves_it_as_an_output_of_the_if():
    # (was refused: the inner `if`'s float flag lives in the outer branch's block; the outer
    # `cond` now gives it out)
    static = d2s.to_static(merged_twice)
    for v, want in (([1.0, 1.0, 1.0], 0.5), ([2.5, 1.0, -1.0], 2), ([-1.0, 1.0, 1.0], 0),
                    ([2.5, -1.0, 1.0], 0), ([3.0, 1.0, 1.0], 1.5)):
        eager, got = merged_twice(rt.to_tensor(v)), static(rt.to_tensor(v))
        assert eager == want and type(eager) is type(want), v
        assert got == want and type(got) is type(want), (v, got)
    assert len(static.program_cache) == 1


def ints_and_floats_then_a_loop(x):
    lengths = [0.25, 2]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        for _ in range(2):
            lengths.append(0.25)
            lengths.append(2)
    return sum(lengths), len(lengths)


def test_a_list_of_ints_and_floats_grown_by_a_graph_loop_holds_floats():
    static = d2s.to_static(ints_and_floats_then_a_loop)
    for v in INPUTS:
        n = 2 + 4 * _trips(v[0])
        expected = (n / 2 * 2.25, n)
        for got in (ints_and_floats_then_a_loop(rt.to_tensor(v)), static(rt.to_tensor(v))):
            assert got == expected and _types(got) == (float, int), (v, got)
