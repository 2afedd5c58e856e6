"""Ordering comparisons (`<`, `<=`, `>`, `>=`) of lists and tuples holding numbers the
converted code computes (issue 35, Dynamo's `tuple(x.tolist()) < (1.5, 0.0)`; the generic
bool() error before): Python's lexicographic order as graph ops, a Python bool the run
decides. One program serves inputs decided by each item and by the lengths."""
import inspect
import operator

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


class Tracker:
    """Keeps the best (loss, step) pair seen, as a checkpoint callback does."""

    def __init__(self, best):
        self.best = best

    def improved(self, losses):
        key = (losses.mean().item(), losses.max().item())
        lo = losses.tolist()
        return (key < self.best, key >= self.best, tuple(lo) > (0.5, 0.25, 1.0),
                sorted(lo) <= [0.25, 0.5], [lo[0], (lo[1], 2)] < [0.5, (0.25, 3)])


def ref_improved(losses, best):
    lo = [float(v) for v in losses]
    key = (float(np.mean(losses)), float(np.max(losses)))
    return (key < best, key >= best, tuple(lo) > (0.5, 0.25, 1.0),
            sorted(lo) <= [0.25, 0.5], [lo[0], (lo[1], 2)] < [0.5, (0.25, 3)])


INPUTS = [[0.5, 0.25, 1.0], [0.5, 0.25, 2.0], [0.25, 0.5, 1.0], [0.75, 0.0, 0.5],
          [0.5, 0.25, 0.75], [0.5, 0.125, 0.5]]


def test_lexicographic_order_of_computed_numbers_in_one_program():
    tracker = Tracker((0.5, 1.0))
    static = d2s.to_static(tracker.improved)
    for xv in INPUTS:
        want = ref_improved(np.asarray(xv, np.float32), tracker.best)
        for got in (tracker.improved(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
            assert len(got) == len(want)
            assert [type(v) for v in got] == [bool] * len(want), got
            assert list(got) == list(want), (xv, got, want)
    assert len(static.program_cache) == 1
    assert {tuple(ref_improved(np.asarray(xv, np.float32), (0.5, 1.0))) for xv in INPUTS} \
        .__len__() > 3  # (the inputs take different paths)


def cmp_lt(x, n):
    items = x.tolist()[:n]
    return tuple(items) < (1.0, 2.0), [*items] < [1.0, 2.0, 3.0]


def cmp_le(x, n):
    items = x.tolist()[:n]
    return tuple(items) <= (1.0, 2.0), [*items] <= [1.0, 2.0, 3.0]


def cmp_gt(x, n):
    items = x.tolist()[:n]
    return tuple(items) > (1.0, 2.0), [*items] > [1.0, 2.0, 3.0]


def cmp_ge(x, n):
    items = x.tolist()[:n]
    return tuple(items) >= (1.0, 2.0), [*items] >= [1.0, 2.0, 3.0]


@pytest.mark.parametrize("cmp, op", [(cmp_lt, operator.lt), (cmp_le, operator.le),
                                     (cmp_gt, operator.gt), (cmp_ge, operator.ge)])
def test_every_order_and_the_length_rule(cmp, op):
    static = d2s.to_static(cmp)
    for xv in ([1.0, 2.0, 3.0], [1.0, 1.0, 9.0], [2.0, 0.0, 0.0], [1.0, 2.0, 4.0]):
        for n in (1, 2, 3):
            want = (op(tuple(xv[:n]), (1.0, 2.0)), op(xv[:n], [1.0, 2.0, 3.0]))
            assert static(rt.to_tensor(xv), n) == want == cmp(rt.to_tensor(xv), n)
    assert len(static.program_cache) == 3  # (one per n: a Python argument)


def whole_tensors(x):
    return (x[:2], 1) < (x[2:], 2)


def test_items_with_no_truth_are_refused_at_the_users_line():
    with pytest.raises(d2s.ConversionError) as e:
        d2s.to_static(whole_tensors)(rt.to_tensor([1.0, 2.0, 3.0, 4.0]))
    text = assert_at_user_line(e.value, __file__, line_of(whole_tensors, "return"))
    assert "compare the tensors themselves" in text


class Best:
    best = (0.5, 1.0)

    def beats(self, x, other):
        return other < self.best, tuple(other) < tuple(self.best)


def test_an_ordering_the_converter_cannot_see_names_the_rewrite():
    box = Best()
    arg = (rt.to_tensor(0.5), 2)
    with pytest.raises(d2s.ConversionError) as e:
        d2s.to_static(box.beats)(rt.to_tensor([1.0]), arg)
    text = assert_at_user_line(e.value, __file__, line_of(Best.beats, "return"))
    assert "`<` of lists or tuples" in text and "tuple(a) < tuple(b)" in text
    assert "bool()" not in text


class BestWritten(Best):
    def beats(self, x, other):
        return tuple(other) < tuple(self.best), list(other) >= list(self.best)


def test_the_rewrite_the_message_names_converts():
    box = BestWritten()
    static = d2s.to_static(box.beats)
    for v in (0.25, 0.5, 0.75):
        arg = (rt.to_tensor(v), 2)
        assert static(rt.to_tensor([1.0]), arg) == box.beats(rt.to_tensor([1.0]), arg) == \
            ((v, 2) < (0.5, 1.0), [v, 2] >= [0.5, 1.0])
