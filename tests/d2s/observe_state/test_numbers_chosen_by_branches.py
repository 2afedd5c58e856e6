"""A list item (or other changed place) that holds a Python number chosen by the branches
of a tensor `if` keeps Python's precision: `lengths.append(0.1)` in one branch and
`lengths.append(1.5)` in the other gave the item as a float32 value, so `sum(lengths)` was
0.6000000238418579 for eager's 0.6 (observe-sets fuzzer, seed 17604). Where one branch
chooses an int and the other a float, the item has the type of the branch taken (it came back
a float on both paths: the list, changed in place, was no state whose number types `if` marks)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def appended_in_both_branches(x, other):
    lengths = [0.5]
    if x.mean() > 0:
        lengths.append(0.1)
    else:
        lengths.append(other)
    return sum(lengths), lengths[-1], len(lengths)


def _check(other):
    static = d2s.to_static(appended_in_both_branches)
    for sign in (1.0, -1.0):  # both branches through one program
        x = rt.to_tensor(np.full(3, sign, "float32"))
        chosen = 0.1 if sign > 0 else other
        want = (0.5 + chosen, chosen, 2)  # (Python's own arithmetic: the reference)
        got, eager = static(x, other), appended_in_both_branches(x, other)
        assert eager == want
        assert got == want, (sign, got)
        assert [type(v) for v in got] == [float, type(chosen), int], got


@pytest.mark.parametrize("other", [1.5, 0.1], ids=["float", "same"])
def test_a_number_the_branches_choose_keeps_pythons_precision(other):
    _check(other)


@pytest.mark.parametrize("other", [-1, True], ids=["int", "bool"])
def test_an_int_or_a_float_the_branches_choose_keeps_its_type(other):
    _check(other)
