"""A function that returns `sum()` of a list inside a loop whose condition is a tensor while
the list is still empty (an int) and again inside a later such loop once floats were appended
(a float): the value the second loop carries for the `return` would have to change dtype.
It is a `ConversionError` at the loop naming "the returned value[1]" and saying what to write
(it was a TypeError naming d2s's `_retval[1]`: observe seed 18202); with `sum(items, 0.0)`
as the message advises, eager, converted and NumPy agree."""
import re

import numpy as np
import pytest

import d2s
import runtime as rt


def scores(x, start):
    lengths = []
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        if rt.mean(x) > 0.0:
            return x * 2.0, sum(lengths, start)
    for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        lengths.append(0.25)
        if x[2] > 0.0:
            return x * 3.0, sum(lengths, start)
    return x, sum(lengths, start)


def _reference(x):
    lengths = []
    for _ in range(max(0, int(np.ceil(x[0])))):
        if x.mean() > 0.0:
            return x * 2.0, 0.0
    for _ in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        lengths.append(0.25)
        if x[2] > 0.0:
            return x * 3.0, sum(lengths, 0.0)
    return x, sum(lengths, 0.0)


def test_an_int_and_a_float_returned_from_two_graph_loops_is_a_clear_refusal():
    x = rt.to_tensor(np.array([0.25, 1.25, 0.25], "float32"))
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(scores)(x, 0)
    message = str(info.value)
    assert "the returned value[1] is i64[] before a loop whose condition is a tensor" in message
    assert "sum(items, 0.0)" in message and not re.search(r"_retval|'t\d+'", message)


def test_with_a_float_start_it_converts():
    static = d2s.to_static(scores)
    for xs in ([0.25, 1.25, 0.25], [-2.25, -0.25, -1.25], [-1.0, 1.5, 1.0], [-1.0, 1.5, -1.0]):
        x = np.array(xs, "float32")
        want_h, want_n = _reference(x)
        eager_h, eager_n = scores(rt.to_tensor(x), 0.0)
        got_h, got_n = static(rt.to_tensor(x), 0.0)
        np.testing.assert_allclose(got_h.numpy(), want_h, rtol=1e-6)
        np.testing.assert_array_equal(got_h.numpy(), eager_h.numpy())
        assert got_n == eager_n == want_n and type(got_n) is type(eager_n) is float
