"""Python bools and ints that converted code puts into a list held by an argument object
(`box.hist.append(bool(t))`) are Python numbers there after the call, as in eager code: also
when a tensor `if` (its test using `or` / `and`) or a graph loop stands between the append
and the end of the call, and when the list is grown by a graph loop and kept across calls.
After no call does the caller's object hold a static `Variable` or a Tensor where eager code
leaves a number (issue 33)."""
import math

import numpy as np

import d2s
import runtime as rt


class Box:
    def __init__(self):
        self.hist = []


def flag_then_if_with_or(x, box):
    box.hist.append(bool(x.sum() > 0))
    if x.mean() > 5 or x[1] > 0:
        box.hist[-1] = bool(x[0] > 0)
    box.last = box.hist[-1] or bool(x[1] > 0)
    return x * 2.0


def flag_read_in_the_test(x, box):
    box.hist.append(bool(x.sum() > 0))
    if (x.mean() > 5 or x[1] > 0) and box.hist[-1]:
        box.hist.append(False)
    else:
        box.hist.append(True)
    return x * 2.0


def flags_grown_in_a_tensor_while(x, box):
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        box.hist.append(bool(x.sum() > k))
    return x * 2.0


def flag_then_if_with_or_reference(x, box):
    box.hist.append(sum(x) > 0)
    if np.mean(x) > 5 or x[1] > 0:
        box.hist[-1] = x[0] > 0
    box.last = box.hist[-1] or x[1] > 0


def flag_read_in_the_test_reference(x, box):
    box.hist.append(sum(x) > 0)
    box.hist.append(not ((np.mean(x) > 5 or x[1] > 0) and box.hist[-1]))


def flags_grown_in_a_tensor_while_reference(x, box):
    for k in range(1, max(0, math.ceil(x[0])) + 1):
        box.hist.append(sum(x) > k)


INPUTS = [[1.0, 2.0], [-1.0, -2.0], [2.5, -1.0], [-1.0, 3.0], [1.5, 3.0]]


def _check(fn, reference):
    """One Box per side for all calls (its list grows across calls)."""
    static = d2s.to_static(fn)
    eager_box, static_box, want = Box(), Box(), Box()
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        np.testing.assert_allclose(static(x, static_box).numpy(), fn(x, eager_box).numpy())
        reference(data, want)
        assert vars(static_box).keys() == vars(eager_box).keys() == vars(want).keys()
        for key, value in vars(eager_box).items():
            got = vars(static_box)[key]
            assert got == value == vars(want)[key], (data, key, got, value)
            items = zip(got, value) if isinstance(value, list) else [(got, value)]
            assert all(type(g) is type(e) is bool for g, e in items), (data, key, got)


def test_bools_on_an_argument_through_a_tensor_if_whose_test_uses_or():
    _check(flag_then_if_with_or, flag_then_if_with_or_reference)


def test_bool_read_in_a_tensor_test_then_appended_in_both_branches():
    _check(flag_read_in_the_test, flag_read_in_the_test_reference)


def test_bools_appended_to_an_argument_list_in_a_tensor_while():
    _check(flags_grown_in_a_tensor_while, flags_grown_in_a_tensor_while_reference)
