"""`x.tolist()` of an argument whose length only the run knows (`InputSpec([None])`): eager
gives a list of Python numbers as long as the batch. Converted code raised "tolist() of static
Variable 'x' ... cannot drive Python logic"; now the list is a tensor array of the numbers
(ints int64, floats float64, bools bool), so iteration is a graph loop, `len()`, `sum()`,
`max()`, indexing, `zip` / `enumerate` and comprehensions follow the run's length, and a
returned list is a list of Python numbers. One program serves every batch size. A tensor of
more dims gives the run's list of lists (test_tolist_of_run_sized_values.py). `max()` / `min()` of a list of Python numbers a graph loop grew gave a 0-d Tensor where
eager gives the number (also fixed here). Eager vs converted vs plain Python."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.static import InputSpec


class Collator:
    """Batch bookkeeping as data-loading code writes it: `self.` state, Python lists."""

    def __init__(self, threshold):
        self.threshold = threshold

    def __call__(self, scores, lengths):
        keep = (scores > self.threshold).tolist()
        lens = lengths.tolist()
        kept = [n for n, k in zip(lens, keep) if k]
        offset, starts = 0, []
        for n in lens:
            starts.append(offset)
            offset += n
        longest = max(lens)
        return (lens, keep, kept, starts, offset, longest, len(lens), sum(scores.tolist()),
                lens[1] if len(lens) > 1 else -1, any(keep), lens.index(longest))


def _python(scores, lengths, threshold):
    keep = [s > threshold for s in scores]
    kept = [n for n, k in zip(lengths, keep) if k]
    starts = [sum(lengths[:i]) for i in range(len(lengths))]
    longest = max(lengths)
    return (lengths, keep, kept, starts, sum(lengths), longest, len(lengths), sum(scores),
            lengths[1] if len(lengths) > 1 else -1, any(keep), lengths.index(longest))


def _types(v):
    return [type(x) for x in v] if isinstance(v, list) else type(v)


def test_lists_of_run_decided_length_one_program():
    collate = Collator(0.5)
    converted = d2s.to_static(collate.__call__, input_spec=[
        InputSpec([None], "float32"), InputSpec([None], "int64")])
    for lengths in ([3, 1, 4], [2], [5, 9, 2, 6, 5]):
        scores = np.linspace(0.0, 1.0, len(lengths)).astype("float32")
        args = (rt.to_tensor(scores), rt.to_tensor(np.array(lengths)))
        want = _python(scores.tolist(), lengths, 0.5)
        eager, static = collate(*args), converted(*args)
        assert eager == want and static == want, lengths
        assert [_types(v) for v in static] == [_types(v) for v in eager]
    assert len(converted.program_cache) == 1


def test_a_list_of_lists_of_a_run_decided_length_is_the_runs_lists():
    """(It was refused at the line, `tolist() of a tensor of shape [-1, 4]`; nested lists of
    run-decided lengths convert now: test_tolist_of_run_sized_values.py.)"""
    def rows(x):
        table = x.tolist()
        return [r[0] for r in table]

    converted = d2s.to_static(rows, input_spec=[InputSpec([None, 4], "float32")])
    for n in (2, 1, 5):
        x = np.arange(4 * n, dtype="float32").reshape(n, 4) / 3
        got = converted(rt.to_tensor(x))
        assert got == rows(rt.to_tensor(x)) == [r[0] for r in x.tolist()]
        assert all(type(v) is float for v in got)
    assert len(converted.program_cache) == 1


def extremes_of_a_grown_list(x):
    steps = []
    for i in range(int(x.sum())):
        steps.append(i * 2 - 3)
    return max(steps), min(steps), max(float(v) for v in x)


@pytest.mark.parametrize("counts", [[1, 2], [0, 1], [4, 0]])
def test_max_of_python_numbers_grown_in_a_graph_loop_is_a_number(counts):
    x = rt.to_tensor(np.array(counts))
    n = sum(counts)
    want = (2 * (n - 1) - 3, -3, float(max(counts)))
    eager, static = extremes_of_a_grown_list(x), d2s.to_static(extremes_of_a_grown_list)(x)
    assert eager == want and static == want
    assert [type(v) for v in static] == [int, int, float]
