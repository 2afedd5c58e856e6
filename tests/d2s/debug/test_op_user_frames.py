"""The user frames each op remembers while it is built (`errors.resolve_origin`): the stack walk
of a frame is reused for its next ops (`errors._LastWalk`), so these check that reuse never
names the wrong caller or line, and that the frame it holds is released with the trace."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import errors


def _frames(e: BaseException) -> list[tuple]:
    return [(f.function, f.source) for f in errors.user_frames(e)]


def must_be_positive(x):
    y = x * 2.0
    assert rt.mean(y) > 0, "mean must be positive"
    return y


def test_one_helper_called_from_two_lines_names_the_failing_call():
    @d2s.to_static
    def twice(x, shift):
        a = must_be_positive(x)
        b = must_be_positive(x - shift)
        return a + b

    x = rt.ones([2, 3])
    np.testing.assert_allclose(twice(x, rt.to_tensor(0.5)).numpy(), np.full([2, 3], 3.0))
    with pytest.raises(AssertionError, match="mean must be positive") as info:
        twice(x, rt.to_tensor(5.0))  # same program: the second call's op fails at run time
    assert _frames(info.value) == [
        ("twice", "b = must_be_positive(x - shift)"),
        ("must_be_positive", 'assert rt.mean(y) > 0, "mean must be positive"')]
    with pytest.raises(AssertionError, match="mean must be positive") as info:
        twice(-x, rt.to_tensor(-5.0))  # the first call fails
    assert _frames(info.value) == [
        ("twice", "a = must_be_positive(x)"),
        ("must_be_positive", 'assert rt.mean(y) > 0, "mean must be positive"')]


def test_ops_of_both_branches_and_after_them_name_their_own_lines():
    @d2s.to_static
    def branches(x, k):
        if rt.mean(x) > 0:
            y = must_be_positive(x * k)
        else:
            y = must_be_positive(-x * k)
        z = must_be_positive(y - 100.0)
        return z

    x = rt.ones([3])
    np.testing.assert_allclose(branches(x, rt.to_tensor(60.0)).numpy(), np.full([3], 40.0))
    np.testing.assert_allclose(branches(-x, rt.to_tensor(60.0)).numpy(), np.full([3], 40.0))
    cases = [(x, -1.0, "y = must_be_positive(x * k)"),
             (-x, -1.0, "y = must_be_positive(-x * k)"),
             (x, 1.0, "z = must_be_positive(y - 100.0)")]
    for xs, k, line in cases:
        with pytest.raises(AssertionError) as info:
            branches(xs, rt.to_tensor(k))
        assert _frames(info.value) == [
            ("branches", line),
            ("must_be_positive", 'assert rt.mean(y) > 0, "mean must be positive"')]


class _Marker:
    """A Python object passed to a converted function, to see whether anything keeps it."""

    def __init__(self, scale: float):
        self.scale = scale


def test_the_traced_frame_is_not_kept_after_the_trace():
    @d2s.to_static
    def scaled(x, marker):
        y = x * marker.scale
        return y + 1.0

    marker = _Marker(3.0)
    np.testing.assert_allclose(scaled(rt.ones([2]), marker).numpy(), [4.0, 4.0])
    alive = weakref.ref(marker)
    del marker, scaled  # (its program may guard the marker; the traced frame must not)
    gc.collect()
    assert alive() is None
