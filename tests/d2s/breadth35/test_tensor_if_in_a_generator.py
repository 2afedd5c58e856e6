"""A tensor `if` inside a generator function that converted code calls: generators run as
Python, so the condition cannot decide what it yields. The error says so at the generator's
line (it used to tell the user to "branch on the tensor itself", which they did); the loop
written in the caller converts, and equals eager and NumPy on inputs that keep 0, 1 or 2
rows."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def _positive_rows(x):
    for row in x:
        if row.sum() > 0:
            yield row


def through_generator(x):
    kept = list(_positive_rows(x))
    return len(kept)


def in_the_caller(x):
    kept = []
    for row in x:
        if row.sum() > 0:
            kept.append(row)
    return len(kept), rt.stack(kept).sum(0) if kept else rt.zeros([2])


_DATA = [np.array(d, np.float32) for d in (
    [[0.5, 1.0], [1.5, 2.0]], [[1.0, 1.0], [-1.0, -2.0]], [[-1.0, -1.0], [-1.0, -2.0]])]


def test_the_error_names_the_generator_and_its_line():
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(through_generator)(rt.to_tensor(_DATA[0]))
    text = assert_at_user_line(info.value, __file__, _positive_rows.__code__.co_firstlineno + 2)
    assert "inside the generator function '_positive_rows'" in text
    assert "branch on the tensor itself" not in text


def test_the_loop_in_the_caller_converts():
    converted = d2s.to_static(in_the_caller)
    for x in _DATA:
        mask = x.sum(1) > 0
        ref = (int(mask.sum()), x[mask].sum(0) if mask.any() else np.zeros(2, np.float32))
        eager, static = in_the_caller(rt.to_tensor(x)), converted(rt.to_tensor(x))
        assert static[0] == eager[0] == ref[0] and type(static[0]) is int
        np.testing.assert_allclose(static[1].numpy(), ref[1], rtol=1e-6)
        np.testing.assert_allclose(static[1].numpy(), eager[1].numpy(), rtol=1e-6)
