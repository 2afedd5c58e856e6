"""`warnings.warn` in converted code warns when the program runs the line, as eager code does:
only on the branch a tensor `if` takes, once per trip of a graph loop, under the filters in
force at the call (`"always"`: every time; the default: once per line), with eager's message,
category, file and line. The call ran once while tracing instead: the first call warned on
inputs that do not take the branch, later calls never warned (silent: `pytest.warns` and
logging of clipped inputs saw other warnings)."""
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt


class InputClipWarning(UserWarning):
    pass


def _check_finite(x, name):
    if not rt.isfinite(x).all():
        warnings.warn(f"{name} has non-finite values; zeroing them", RuntimeWarning,
                      stacklevel=2)
        x = rt.where(rt.isfinite(x), x, rt.zeros_like(x))
    return x


def sanitize(x, steps):
    x = _check_finite(x, "input")
    if x.max() > 1:
        warnings.warn(InputClipWarning("input above 1; clipping"))
        x = x.clip(max=1.0)
    i = 0
    while i < steps:                              # a graph loop: a warning per trip
        warnings.warn("refining", DeprecationWarning)
        x = x * 0.5
        i += 1
    return x


CALLS = [([0.5, 0.25], 0), ([3.0, 0.5], 2), ([np.inf, 0.5], 1), ([0.1, 0.2], 0)]


def _seen(fn, mode):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(mode)
        outs = [fn(rt.to_tensor(np.float32(v)), rt.to_tensor(n)).numpy() for v, n in CALLS]
    return outs, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


@pytest.mark.parametrize("mode", ["always", "default"])
def test_warnings_are_raised_when_the_program_runs_the_line(mode):
    want_outs, want = _seen(sanitize, mode)
    static = d2s.to_static(sanitize)
    got_outs, got = _seen(static, mode)
    assert got == want
    for g, w in zip(got_outs, want_outs, strict=True):
        np.testing.assert_allclose(g, w)
    if mode == "always":
        assert [m for m, *_ in want] == ["input above 1; clipping", "refining", "refining",
                                         "input has non-finite values; zeroing them",
                                         "refining"]
        assert all(f == __file__ for _, _, f, _ in want)
    assert len(static.program_cache) == 1
