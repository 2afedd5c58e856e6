"""Small refusals (issue 35): a string chosen by a tensor condition, and list methods that
compare tensors (`index`, `count`, `sort`), raise a clear ConversionError at the user's line
(they raised `unsupported dtype dtype('<U3')` or a bare `bool()` of a tensor); the same
functions still convert where the strings or comparisons are Python's."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def gate(x, verbose):
    if x.mean() > 0:
        mode = "open"
    else:
        mode = "closed"
    label = "gate" if verbose else "g"      # a Python choice: stays a string
    return x * 2.0, mode, label


def test_a_string_chosen_by_a_tensor_condition_converts():
    # (session 23: the `if` gives out the str's id; the call gives the str back)
    static = d2s.to_static(gate, full_graph=True)
    for row, want_mode in (([1.0, -3.0], "closed"), ([3.0, 1.0], "open")):
        x = rt.to_tensor(row)
        got, want = static(x, True), gate(x, True)
        assert got[1:] == want[1:] == (want_mode, "gate")
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
    assert len(static.program_cache) == 1


def same_text(x):
    if x.mean() > 0:
        tag, y = "act", x * 2.0
    else:
        tag, y = "act", -x
    return y, tag


def test_the_same_string_in_both_branches_converts():
    static = d2s.to_static(same_text, full_graph=True)
    for values in ([1.0, 2.0], [-1.0, -2.0]):
        x = np.array(values, "float32")
        want = x * 2.0 if x.mean() > 0 else -x
        for fn in (same_text, static):
            y, tag = fn(rt.to_tensor(x))
            np.testing.assert_allclose(y.numpy(), want)
            assert tag == "act"
    assert len(static.program_cache) == 1


def first_peak(x):
    parts = [x * 0.5, x, x * 2.0]
    return parts.index(x * 2.0)


def peaks(x):
    parts = [x, x * 2.0, x]
    return parts.count(x * 2.0)


@pytest.mark.parametrize("fn, call, hint", [
    (first_peak, "parts.index", "rt.nonzero(rt.stack(lst) == v)"),
    (peaks, "parts.count", "(rt.stack(lst) == v).sum()"),
    # (`lst.sort()` by tensors converts: test_sorting_by_tensor_keys.py)
])
def test_list_methods_that_compare_tensors(fn, call, hint):
    x = rt.to_tensor([1.0])
    fn(x)  # eager code compares one-element tensors value by value
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(x)
    text = assert_at_user_line(info.value, __file__, line_of(fn, call))
    assert f"list.{call.split('.')[1].split('(')[0]}()" in text and hint in text


def python_positions(x, names):
    order = sorted(names)
    k = order.index("b") + names.count("a")   # lists of Python values: unchanged
    xs = [x, x * 3.0]
    return xs[k % 2] + xs.index(xs[0])       # (the same tensor: found by identity)


def test_list_methods_on_python_values_still_convert():
    static = d2s.to_static(python_positions, full_graph=True)
    for names, values in ((["c", "a", "b"], [1.0, 2.0]), (["b", "a", "a"], [-1.0, 0.5])):
        x = np.array(values, "float32")
        k = sorted(names).index("b") + names.count("a")
        want = x if k % 2 == 0 else x * 3.0
        for fn in (python_positions, static):
            np.testing.assert_allclose(fn(rt.to_tensor(x), names).numpy(), want)


def tuple_position(x):
    pair = (x * 0.5, x)
    return pair.index(x * 1.0)


def test_a_tuple_index_comparing_tensors():
    x = rt.to_tensor([2.0])
    assert tuple_position(x) == 1
    with pytest.raises(d2s.ConversionError, match=r"tuple\.index\(\)") as info:
        d2s.to_static(tuple_position, full_graph=True)(x)
    assert_at_user_line(info.value, __file__, line_of(tuple_position, "pair.index"))


def same_pair(x, y):
    ours, theirs = [x, x * 2.0], [y, y * 2.0]
    if ours == theirs:                      # item by item, as eager's list comparison
        return x + 1.0
    if [x] != [x]:                          # the same tensor: equal by identity
        return x * 0.0
    return x - 1.0


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (1.0, 2.0), (-3.0, -3.0), (0.5, -0.5)])
def test_lists_of_tensors_compared_with_eq(a, b):
    static = d2s.to_static(same_pair, full_graph=True)
    x, y = rt.to_tensor([a]), rt.to_tensor([b])
    want = np.array([a + 1.0 if a == b else a - 1.0], "float32")
    for fn in (same_pair, static):
        np.testing.assert_allclose(fn(x, y).numpy(), want)
    assert len(static.program_cache) == 1
