"""`list.index()` and `list.count()` of a Python list of numbers the program computes
(`[int(r.argmax()) for r in x]`, `float(row.max())` per row) compare when the program runs,
as they do for lists a graph loop grows; `index` of a number not in the list raises eager's
ValueError then. They were refused ("the truth of a comparison ... known only when the program
runs")."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def best_rows(x, wanted):
    scores = [float(row.max()) for row in x]
    labels = [int(row.argmax()) for row in x]
    first_zero = labels.index(0) if 0 in labels else -1
    return scores.index(max(scores)), labels.count(0), first_zero, labels.index(wanted)


def _reference(x, wanted):
    scores = [float(r.max()) for r in x]
    labels = [int(r.argmax()) for r in x]
    return (scores.index(max(scores)), labels.count(0), labels.index(0) if 0 in labels else -1,
            labels.index(wanted))


def test_index_and_count_follow_the_run():
    converted = d2s.to_static(best_rows)
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.1, -0.3], [0.0, 3.0, 1.0]], "float32")
    for sign, wanted in ((1, 1), (-1, 1)):
        args = (rt.to_tensor(sign * x), wanted)
        eager, static = best_rows(*args), converted(*args)
        assert static == eager == _reference(sign * x, wanted)
        assert all(type(v) is int for v in static)
    assert len(converted.program_cache) == 1


def test_index_of_a_missing_number_raises_when_run():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.1, -0.3]], "float32")
    with pytest.raises(ValueError, match="7 is not in list") as eager:
        best_rows(rt.to_tensor(x), 7)
    with pytest.raises(ValueError, match="7 is not in list"):
        d2s.to_static(best_rows)(rt.to_tensor(x), 7)
    assert str(eager.value) == "7 is not in list"
