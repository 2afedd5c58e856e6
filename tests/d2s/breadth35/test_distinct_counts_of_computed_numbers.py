"""`len()` of a set of numbers the converted code computes (issue 35, Dynamo's
`len(set(x.tolist()))`; refused before: equal values are distinct objects while tracing):
the program counts the distinct values when it runs, as a Python set compares numbers
(`1 == 1.0 == True`). One program serves inputs with different counts."""
import numpy as np
import pytest

import d2s
import runtime as rt


class Vocab:
    def __init__(self, reserved):
        self.reserved = reserved

    def stats(self, ids):
        values = ids.tolist()
        distinct = set(values)
        buckets = {int(v) // 2 for v in values}
        with_reserved = set(values) | {self.reserved}
        if len(distinct) > 1:
            top = max(distinct)
        else:
            top = min(distinct)
        return len(distinct), len(buckets), len(with_reserved), top


def ref_stats(ids, reserved):
    values = [float(v) for v in ids]
    distinct = set(values)
    return (len(distinct), len({int(v) // 2 for v in values}), len(distinct | {reserved}),
            max(distinct))


INPUTS = [[1.0, 2.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [0.0, 5.0, 4.0, 1.0], [7.0, 0.0, 7.0, 0.0],
          [2.0, 3.0, 3.0, 2.0]]


def test_distinct_counts_follow_the_run_in_one_program():
    vocab = Vocab(0)
    static = d2s.to_static(vocab.stats)
    for xv in INPUTS:
        want = ref_stats(xv, 0)
        assert want[0] == np.unique(xv).size
        for got in (vocab.stats(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
            assert tuple(got) == want, (xv, got, want)
            assert [type(v) for v in got[:3]] == [int, int, int]
    assert len(static.program_cache) == 1


def counts_mixed(x):
    return len({1.0, x[0].item(), True}), len({int(x[1]), 2, x[2].item()})


@pytest.mark.parametrize("xv", [[1.0, 2.0, 2.0], [3.0, 1.0, 2.5], [1.0, 2.0, 3.0]])
def test_python_numbers_beside_computed_ones_count_as_a_set_compares_them(xv):
    want = (len({1.0, xv[0], True}), len({int(xv[1]), 2, xv[2]}))
    assert counts_mixed(rt.to_tensor(xv)) == want
    assert d2s.to_static(counts_mixed)(rt.to_tensor(xv)) == want
