"""Lists of Python numbers grown, popped or inserted into by a graph loop become tensor
arrays of the numbers' dtype (ints int64, floats float32, bools bool): `len`, `sum`,
indexing and iteration follow the run-time length, also when the loop runs zero times."""
import numpy as np
import pytest

import d2s
import runtime as rt


def lengths_of_steps(x, value):
    lengths = []
    i = rt.zeros([], "int64")
    while i < x.sum():
        lengths.append(value)
        i += 1
    total = 0
    for v in lengths:
        total = total + v
    return len(lengths), sum(lengths), total


def doubled_indices(x):
    out = []
    for i in range(rt.cast(x.sum(), "int64")):
        out.append(i * 2)
    return len(out), sum(out), out[-1] if len(out) > 0 else -1


def popped(x):
    vals = [1, 2, 3, 4]
    i = rt.zeros([], "int64")
    while i < x.sum():
        vals.pop()
        i += 1
    return len(vals), sum(vals), vals[0]


def inserted(x):
    vals = [0.5]
    i = rt.zeros([], "int64")
    while i < x.sum():
        vals.insert(0, 1.0 + len(vals))
        i += 1
    return len(vals), sum(vals), vals[0]


def numbers(values) -> list:
    return [v.item() if isinstance(v, rt.Tensor) else v for v in values]


INPUTS = [[1.0, 2.0], [0.0, 0.0], [2.0, 0.0], [-1.0, 0.0]]


@pytest.mark.parametrize("value, dtype", [(0, "int64"), (1.5, "float32"), (True, "bool")])
def test_appended_in_a_tensor_while(value, dtype):
    static = d2s.to_static(lengths_of_steps)
    for data in INPUTS:
        steps = max(0, int(np.ceil(sum(data))))
        want = (steps, value * steps, value * steps)
        eager = lengths_of_steps(rt.to_tensor(data), value)
        got = static(rt.to_tensor(data), value)
        assert len(got) == len(eager) == len(want)
        assert numbers(eager) == list(want)
        assert numbers(got) == list(want)
    assert static._cache.traces == 1


@pytest.mark.parametrize("fn, reference", [
    (doubled_indices, lambda n: (n, n * (n - 1), 2 * (n - 1) if n else -1)),
    (popped, lambda n: (4 - min(n, 3), sum([1, 2, 3, 4][:4 - min(n, 3)]), 1)),
    (inserted, lambda n: (n + 1, 0.5 + sum(2.0 + k for k in range(n)), 1.0 + n if n else 0.5)),
])
def test_for_range_pop_and_insert(fn, reference):
    static = d2s.to_static(fn)
    for data in [[1.0, 2.0], [0.0, 0.0], [2.0, 0.0], [1.0, 1.0]]:
        n = max(0, int(sum(data)))
        want = list(reference(n))
        eager, got = numbers(fn(rt.to_tensor(data))), numbers(static(rt.to_tensor(data)))
        assert len(eager) == len(got) == len(want)
        assert eager == want
        np.testing.assert_allclose(got, want)
    assert static._cache.traces == 1


def ints_then_a_float(x):
    vals = [1, 2]
    i = rt.zeros([], "int64")
    while i < x.sum():
        vals.insert(0, 0.5)  # Python's list holds ints and floats: each item keeps its type
        i += 1
    return sum(vals), vals


def test_a_float_into_a_list_of_ints_keeps_each_items_type():
    static = d2s.to_static(ints_then_a_float)
    for data, trips in (([1.0, 1.0], 2), ([0.0, 0.0], 0), ([1.0, 0.0], 1)):
        x = rt.to_tensor(data)
        want = (3 + 0.5 * trips if trips else 3, [0.5] * trips + [1, 2])
        eager, got = ints_then_a_float(x), static(x)
        assert len(got[1]) == len(eager[1]) == len(want[1])
        assert eager == got == want
        assert [type(v) for v in (got[0], *got[1])] == [type(v) for v in (want[0], *want[1])]
