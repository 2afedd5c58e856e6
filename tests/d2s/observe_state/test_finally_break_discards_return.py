"""A `break` in a `finally` discards the `return` the `try` was making (Python's rule); after
the loop, the function appends a float to a list that was empty at the `return` and sums
it. Found by `python -m tests.fuzz --gen observe --examples 550 --seed 16701`: the converted
call gave 1.0 for eager's 1.5, the discarded `return`'s int `sum` (a graph value carried by
the loop) deciding the dtype of the merged return value, so the float 1.5 became an int64
constant (fixed in d2s/operators/scalar_merge.py: numbers of two types merge as the wider)."""
from __future__ import annotations

# ruff: noqa: B012  (a `break` in `finally` is what is tested)
import numpy as np

import d2s
import runtime as rt


def sum_after_discarded_return(x):
    lengths = []
    h = x * 1.0
    for _ in range(2):
        try:
            if rt.mean(x) > 0.0:
                return h, sum(lengths)
        finally:
            if rt.sum(h) > 1.0:
                break
    lengths.append(1.5)
    return h, sum(lengths)


def test_a_break_in_finally_discards_the_return_and_the_float_sum_follows():
    static = d2s.to_static(sum_after_discarded_return)
    for v, want in (([2.75, 2.75, 1.25], 1.5), ([-1.0, -2.0, -0.5], 1.5),
                    ([0.1, 0.1, 0.1], 0)):
        x = np.array(v, "float32")
        _, eager = sum_after_discarded_return(rt.to_tensor(x))
        _, got = static(rt.to_tensor(x))
        assert eager == want and type(eager) is type(want)
        assert got == want and type(got) is type(want), (v, got)
