"""`seq[a:a + b]` of a Python list of numbers with bounds from `int(x[0])` (Dynamo's
int_tensor_item_indexing; token windows, schedules and per-layer tables sliced by positions a
model computes): eager's slice is a list whose length the values decide. Converted code
refused ("a value computed by the converted program indexes a Python container"); now the
program slices the list held as a constant tensor, with Python's clamping, negative bounds and
steps, and the result is a list of Python numbers of the run's length (a tensor array), which
`len`, `sum`, indexing, truth, `[::-1]` and a returned list follow. A list of other values
(strs) sliced by computed bounds is refused at the line as before. Eager vs converted vs plain
Python over inputs that take different paths through one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

SCHEDULE = [0.5, 0.25, 0.125, 1.5, 2.0, 0.75]


class Windows:
    def __init__(self):
        self.flags = [True, False, True, True, False]

    def __call__(self, x):
        seq = list(range(10))
        a, b = int(x[0]), int(x[1])
        window = seq[a:a + b]
        if b > a:
            window = window[::-1]
        rates = SCHEDULE[-b:]
        every = seq[a::2]
        return (len(window), sum(window), window[0] if window else -1, window, rates,
                every[1:], self.flags[a - 2:b], max(rates), seq[:a][-1] if a else None)


def _python(a, b):
    seq, flags = list(range(10)), [True, False, True, True, False]
    window = seq[a:a + b]
    if b > a:
        window = window[::-1]
    rates = SCHEDULE[-b:]
    return (len(window), sum(window), window[0] if window else -1, window, rates,
            seq[a::2][1:], flags[a - 2:b], max(rates), seq[:a][-1] if a else None)


def _types(v):
    return [type(x) for x in v] if isinstance(v, list) else type(v)


@pytest.mark.parametrize("a, b", [(3, 1), (0, 5), (7, 4), (2, 2), (9, 6)])
def test_computed_slices_of_python_lists_one_program(a, b):
    fn = Windows()
    converted = d2s.to_static(fn.__call__)
    for x in ([a, b, 0], [1, 3, 0]):
        t = rt.to_tensor(np.array(x))
        want = _python(*x[:2])
        eager, static = fn(t), converted(t)
        assert eager == want and static == want, x
        assert [_types(v) for v in static] == [_types(v) for v in eager]
    assert len(converted.program_cache) == 1


def test_a_list_of_strs_sliced_by_computed_bounds_is_refused_at_the_line():
    words = ["the", "cat", "sat", "down"]

    def span(x):
        start, end = int(x.argmin()), int(x.argmax())
        return " ".join(words[start:end + 1])

    with pytest.raises(d2s.ConversionError, match="indexes a Python container") as info:
        d2s.to_static(span)(rt.to_tensor(np.array([0.5, 0.1, 0.9, 0.3])))
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "words[start:end + 1]" in text
    for internal in ("_retval", "Variable(%", "static Variable", "<undefined", "slice_"):
        assert internal not in text
