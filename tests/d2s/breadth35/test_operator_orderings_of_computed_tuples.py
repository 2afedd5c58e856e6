"""`operator.lt(a, b)` / `le` / `gt` / `ge` / `eq` / `ne` of tuples holding computed numbers, called by
name or through a name that holds the function (`better = operator.lt if mode == "min" else
operator.gt`, early-stopping and checkpoint-tracker code): Python compares the tuples item by
item, asking the truth of each item's `==`, which only the run knows. Converted code raised
"bool() of a tensor computed by the converted code" from inside `operator.lt`; now it
computes the comparison as graph ops (`operators.sequence_order`, as `a < b` written with a
tuple does; `eq` / `ne` as `==` / `!=`) and gives a Python bool. Eager vs converted vs plain Python on the numbers, over
inputs where the first items decide and where they tie (the second ones decide)."""
from __future__ import annotations

import operator
from operator import lt

import numpy as np
import pytest

import d2s
import runtime as rt


class Tracker:
    """A best-checkpoint tracker as training scripts write it: the comparison chosen once."""

    def __init__(self, mode):
        self.better = operator.lt if mode == "min" else operator.gt


def improved(scores, steps, tracker):
    cur = (float(scores[-1]), int(steps[-1]))
    best = (float(scores[:-1].min()), int(steps[0]))
    same = operator.eq
    return (tracker.better(cur, best), operator.le(cur, best), lt(cur, best),
            operator.ge((cur, 1), (best, 0)), operator.gt(cur, (best[0], 3)),
            operator.eq(cur, best), operator.ne(cur, (0.25, 5)), same(best, (cur[0], 2)))


def _python(scores, steps, mode):
    cur, best = (float(scores[-1]), int(steps[-1])), (float(min(scores[:-1])), int(steps[0]))
    better = operator.lt if mode == "min" else operator.gt
    return (better(cur, best), cur <= best, cur < best, (cur, 1) >= (best, 0),
            cur > (best[0], 3), cur == best, cur != (0.25, 5), best == (cur[0], 2))


@pytest.mark.parametrize("mode", ["min", "max"])
def test_orderings_of_computed_tuples_one_program(mode):
    tracker = Tracker(mode)
    converted = d2s.to_static(improved)
    for scores, steps in (([0.5, 0.25, 0.125], [2, 5, 1]),    # (first items decide)
                          ([0.5, 0.25, 0.25], [2, 5, 1]),     # (a tie: the steps decide)
                          ([0.5, 0.25, 0.25], [2, 5, 2]),     # (equal tuples)
                          ([0.5, 0.25, 0.75], [4, 5, 3])):
        args = (rt.to_tensor(np.array(scores, "float32")), rt.to_tensor(np.array(steps)))
        want = _python(np.array(scores, "float32").tolist(), steps, mode)
        eager, static = improved(*args, tracker), converted(*args, tracker)
        assert eager == want and static == want, (scores, steps)
        assert [type(v) for v in static] == [bool] * 8
    assert len(converted.program_cache) == 1
