"""Names that a `try` whose errors the program raises binds only in its `except` and `else`
clauses (`else: flag = 2.0`), and strs bound on both sides (`tag = "ok"` in the body,
`tag = "empty"` in the clause). The run's dispatch between the clauses handed such a name on
before anything bound it: eager ran, the converted call raised `UnboundLocalError` (a
number) or refused the str as "chosen by a tensor condition ... unbound in the else
branch". Each now gives eager's value and type, on inputs taking each clause."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


def checked_scale(x):
    try:
        if x.sum() < 0:
            raise ValueError("negative input")
        out = x * 2
    except ValueError:
        out = x * 0
        level = 1.0
    else:
        level = 2.0
    return out, level


def ratio_with_tag(x):
    n = int((x > 0).sum())
    try:
        r = x.shape[0] / n
        tag = "ok"
    except ZeroDivisionError:
        r = 0.0
        tag = "empty"
    return r, tag


def tag_in_clauses(x):
    n = int((x > 0).sum())
    try:
        r = 1 / n
    except ZeroDivisionError:
        r = -1.0
        tag = "empty"
    else:
        tag = "ok"
    return x * r, tag


_DATA = [np.array(d, np.float32) for d in ([1.0, 2.0], [-1.0, -2.0], [3.0, -0.5])]


def _ref(x):
    n = int((x > 0).sum())
    return n, (x.shape[0] / n if n else 0.0), ("ok" if n else "empty")


def test_a_number_bound_only_by_the_clauses():
    converted = d2s.to_static(checked_scale)
    for x in _DATA:
        eager, static = checked_scale(rt.to_tensor(x)), converted(rt.to_tensor(x))
        ref = (x * 0, 1.0) if x.sum() < 0 else (x * 2, 2.0)
        np.testing.assert_array_equal(static[0].numpy(), ref[0])
        np.testing.assert_array_equal(static[0].numpy(), eager[0].numpy())
        assert static[1] == eager[1] == ref[1] and type(static[1]) is float


def test_a_str_bound_in_the_body_and_the_clause():
    converted = d2s.to_static(ratio_with_tag)
    for x in _DATA:
        _, r, tag = _ref(x)
        eager, static = ratio_with_tag(rt.to_tensor(x)), converted(rt.to_tensor(x))
        assert static == eager == (r, tag) and type(static[0]) is float


def test_a_str_bound_in_the_clause_and_else():
    converted = d2s.to_static(tag_in_clauses)
    for x in _DATA:
        n, _, tag = _ref(x)
        eager, static = tag_in_clauses(rt.to_tensor(x)), converted(rt.to_tensor(x))
        np.testing.assert_allclose(static[0].numpy(), x * (1 / n if n else -1.0), rtol=1e-6)
        np.testing.assert_allclose(static[0].numpy(), eager[0].numpy(), rtol=1e-6)
        assert static[1] == eager[1] == tag
    assert len(converted.program_cache) == 1
