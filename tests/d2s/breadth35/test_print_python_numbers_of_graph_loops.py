"""`print` of a Python number that became a graph value (a loop counter, a flag or a float
total of a loop with a tensor `break` or condition) shows eager's text (`converged at 3`,
`found True`, `total 1.5`), not a tensor's repr."""
import contextlib
import io

import numpy as np
import pytest

import d2s
import runtime as rt


def halve_until_small(x, steps):
    for i in range(steps):
        x = x * 0.5
        if x.max() < 0.1:
            print(f"converged at {i}")
            break
    return x


def search_flag(scores, threshold):
    found = False
    for s in scores:
        if s > threshold:
            found = True
            break
    print("found", found)
    return scores * 1


def float_total(x, n):
    total = 0.0
    i = 0
    while i < n:
        total += 0.5
        i += 1
    print("total", total, "trips", i)
    return x + total


def _printed(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args)
    return out, buf.getvalue()


@pytest.mark.parametrize("fn, argsets, texts", [
    (halve_until_small, [([1.0], 6), ([0.01], 6), ([100.0], 3)],
     ["converged at 3\n", "converged at 0\n", ""]),
    (search_flag, [([0.1, 0.9], 0.5), ([0.1, 0.2], 0.5)], ["found True\n", "found False\n"]),
    (float_total, [([1.0], 3), ([1.0], 0)], ["total 1.5 trips 3\n", "total 0.0 trips 0\n"]),
])
def test_printed_like_eager(fn, argsets, texts):
    static = d2s.to_static(fn)
    assert len(argsets) == len(texts)
    for (x, arg), text in zip(argsets, texts):
        x = np.asarray(x, np.float32)
        if fn is float_total:
            arg = rt.to_tensor(arg, dtype="int64")
        want, eager_text = _printed(fn, rt.to_tensor(x), arg)
        got, static_text = _printed(static, rt.to_tensor(x), arg)
        assert eager_text == text
        assert static_text == eager_text
        np.testing.assert_allclose(got.numpy(), want.numpy())
