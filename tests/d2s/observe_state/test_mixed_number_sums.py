"""`sum()` of a list of Python numbers that a tensor `if` or a graph loop grows with ints beside
floats (issue 33, the observe campaign's last type differences): Python's sum is a float
where a float item is left and an int otherwise. Where a float surely stays (the list starts
with one and nothing is popped) or `sum` gets a float start, the converted call returns
eager's type on every path of one program; where only the run decides which items are left,
the program keeps each item's type beside it and the call gives the run's type (it raised a
ConversionError advising `sum(items, 0.0)`, and before that returned the float `0.0` for eager's
int `0`); a sum whose type only the run decides, carried out of a graph loop, is refused at the
loop."""
import math

import numpy as np
import pytest

import d2s
import runtime as rt


def float_start_then_ints(x):
    lengths = [0.5]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.append(2)
    if rt.mean(x) > 0.0:
        lengths.append(1)
    return sum(lengths), len(lengths)


def float_start_value(x):
    lengths = []
    if rt.sum(x) > 1.0:
        lengths.append(0.25)
    lengths.append(0)
    return sum(lengths, 0.0), len(lengths)


def popped_then_float_appended(x):
    lengths = [0.5, 1]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.pop(0)
        lengths.append(3)
        lengths.append(0.25)
    return sum(lengths), len(lengths)


def float_and_int_per_trip(x):
    lengths = []
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.append(0.25)
        lengths.append(2)
    return sum(lengths), 0


def _trips(v: float) -> int:
    return max(0, math.ceil(v))


def float_start_then_ints_reference(v):
    lengths = [0.5] + [2] * _trips(v[0]) + ([1] if sum(v) > 0 else [])
    return sum(lengths), len(lengths)


def float_start_value_reference(v):
    lengths = ([0.25] if sum(v) > 1.0 else []) + [0]
    return sum(lengths, 0.0), len(lengths)


def float_and_int_per_trip_reference(v):
    return sum([0.25, 2] * _trips(v[0])), 0


def popped_then_float_appended_reference(v):
    lengths = [0.5, 1]
    for _ in range(_trips(v[0])):
        lengths = lengths[1:] + [3, 0.25]
    return sum(lengths), len(lengths)


INPUTS = ([1.5, 2.0, 0.5], [-1.0, -2.0, -0.5], [2.5, -1.0, -3.0], [-1.0, 1.0, 0.5])
CASES = [(float_start_then_ints, float_start_then_ints_reference),
         (float_start_value, float_start_value_reference),
         (popped_then_float_appended, popped_then_float_appended_reference),
         (float_and_int_per_trip, float_and_int_per_trip_reference)]


@pytest.mark.parametrize(("fn", "reference"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_float_that_surely_stays_gives_eagers_type(fn, reference):
    static = d2s.to_static(fn)
    for v in INPUTS:
        expected = reference(v)
        eager = fn(rt.to_tensor(v))
        converted = static(rt.to_tensor(v))
        assert eager == expected and type(eager[0]) is type(expected[0]), v
        assert converted == expected, (v, converted)
        assert [type(a) for a in converted] == [type(a) for a in expected], (v, converted)
    assert len(static.program_cache) == 1  # (one program for every path)


def int_after_a_branch_float(x):
    lengths = []
    if rt.sum(x) > 1.0:
        lengths.append(0.25)
    lengths.append(0)
    return sum(lengths), len(lengths)


def float_popped_in_a_loop(x):
    lengths = [0.5, 1]
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        lengths.pop(0)
        lengths.append(3)
        lengths.append(4)
    return sum(lengths)


def returned_from_try_finally(x, y):
    lengths = []
    for j in range(2):
        try:
            k = rt.zeros([])
            while k < x[0]:
                k = k + 1.0
                lengths.append(0.25)
                lengths.append(2)
            if y[0] > x[1]:
                return sum(lengths)
        finally:
            if rt.sum(x) > 1.0:
                break  # noqa: B012  (a jump out of finally, as the campaign wrote it)
    return sum(lengths)


@pytest.mark.parametrize("fn", [int_after_a_branch_float, float_popped_in_a_loop])
def test_a_type_only_the_run_decides_is_the_runs(fn):
    # (each item's type is kept beside it: it was a ConversionError advising sum(items, 0.0))
    static = d2s.to_static(fn)
    eager = [fn(rt.to_tensor(v)) for v in INPUTS]
    got = [static(rt.to_tensor(v)) for v in INPUTS]
    total = [e[0] if isinstance(e, tuple) else e for e in eager]
    assert {type(t) for t in total} == {int, float}  # (eager: int or float by the path)
    assert len(got) == len(eager) and got == eager
    assert [type(g[0] if isinstance(g, tuple) else g) for g in got] == [type(t) for t in total]
    assert len(static.program_cache) == 1


def test_a_run_typed_sum_returned_from_a_graph_loop_gives_the_runs_type():
    # (the campaign's case: a `return` inside try/finally in a `for` a tensor `break` makes a
    # graph loop; the loop carried the sum's value, not its type: `0.0` for eager's `0`, then
    # a ConversionError at the loop; now it carries the type flags too, `loop_number_kinds`)
    static = d2s.to_static(returned_from_try_finally)
    y = rt.to_tensor([-0.25, -2.75, 2.25])
    for data, want in (([-0.25, -2.75, -0.25], 0), ([1.25, 2.75, 0.25], 2 * 2.25)):
        x = rt.to_tensor(data)
        eager, got = returned_from_try_finally(x, y), static(x, y)
        assert eager == got == want and type(eager) is type(got) is type(want)


def returned_in_a_tuple_from_try_finally(x, y):
    lengths = []
    h = x * 1.0
    for j in range(2):
        try:
            k = rt.zeros([])
            while k < x[0]:
                k = k + 1.0
                lengths.append(0.25)
            if y[0] > x[1]:
                return h, sum(lengths)
        finally:
            if rt.sum(x) > 1.0:
                break  # noqa: B012
    return h, sum(lengths)


def test_a_run_typed_sum_returned_in_a_tuple_from_a_graph_loop_gives_the_runs_type():
    # (the campaign's seed 33001 cases: the sum inside a returned tuple was a silent `0.0`,
    # then refused at the loop; now the tuple's items carry the type flags, loop_number_kinds)
    static = d2s.to_static(returned_in_a_tuple_from_try_finally)
    y = rt.to_tensor([-0.25, -2.75, 2.25])
    for data, want in (([-0.25, -2.75, -0.25], 0), ([1.0, 2.0, 3.0], 0.25),
                       ([5.0, -2.0, 3.0], 1.25), ([-1.0, -2.0, -3.0], 0)):
        x = rt.to_tensor(data)
        (h1, eager), (h2, got) = returned_in_a_tuple_from_try_finally(x, y), static(x, y)
        assert eager == got == want and type(eager) is type(got) is type(want)
        np.testing.assert_array_equal(h2.numpy(), h1.numpy())
    assert static.program_cache.traces == 1
