"""`len` and `sum` of a list of Python numbers that a graph loop grows are Python numbers when
returned, as in eager code, also where the value leaves through a `return` inside a loop or
through a loop that a `finally` breaks: the mark that a tensor array holds Python numbers
survives the loops and branches it passes; so do the items of a list whose length the loop
keeps (each item a loop variable) (issue 33)."""
import math

import numpy as np

import d2s
import runtime as rt


def returned_inside_the_loop(x):
    nums = [3, 1]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        nums.append(2)
        if x[1] > 0:
            return len(nums), sum(nums)
    return len(nums), sum(nums)


def returned_past_a_finally_break(x):
    nums = [3, 1]
    for _ in range(2):
        try:
            k = rt.zeros([])
            while k < x[0]:
                k = k + 1.0
                nums.append(2)
            if x[1] > 0:
                return len(nums), sum(nums)
        finally:
            if x[2] > 0:
                break  # noqa: B012 (what the test is about)
    return len(nums), sum(nums)


def rotated_in_a_tensor_while(x):
    nums = [3, 1]
    h = x * 1.0
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        if len(nums) > 1:
            h = h + nums.pop(0)
        nums.insert(0, 5)
    return len(nums), sum(nums), nums[0]


def _trips(v: float) -> int:
    return max(0, math.ceil(v))


def returned_inside_the_loop_reference(x):
    nums = [3, 1]
    for _ in range(_trips(x[0])):
        nums.append(2)
        if x[1] > 0:
            break
    return len(nums), sum(nums)


def returned_past_a_finally_break_reference(x):
    nums = [3, 1]
    for _ in range(2):
        nums += [2] * _trips(x[0])
        if x[1] > 0 or x[2] > 0:  # (the return, or the break that drops it)
            break
    return len(nums), sum(nums)


def rotated_in_a_tensor_while_reference(x):
    nums = [3, 1]
    for _ in range(_trips(x[0])):
        nums.pop(0)
        nums.insert(0, 5)
    return len(nums), sum(nums), nums[0]


# a positive / negative x[0] (loops that run or not), x[1] (return or not), x[2] (break)
INPUTS = [[1.25, 2.75, 1.25], [-1.0, -1.0, 0.0], [2.5, -1.0, 1.0], [2.5, 1.0, -1.0],
          [0.5, -1.0, -1.0]]


def _check(fn, reference):
    static = d2s.to_static(fn)
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        eager, got, want = fn(x), static(x), reference(data)
        assert len(got) == len(eager) == len(want)
        for g, e, w in zip(got, eager, want):
            assert type(g) is int and type(e) is int, (data, got, eager)
            assert g == e == w, (data, got, eager, want)


def test_len_and_sum_returned_inside_a_tensor_while():
    _check(returned_inside_the_loop, returned_inside_the_loop_reference)


def test_len_and_sum_returned_past_a_finally_that_breaks():
    _check(returned_past_a_finally_break, returned_past_a_finally_break_reference)


def test_len_and_sum_of_a_list_whose_length_a_tensor_while_keeps():
    """(popped and refilled: the list stays a Python list, its items carried by the loop)"""
    _check(rotated_in_a_tensor_while, rotated_in_a_tensor_while_reference)
