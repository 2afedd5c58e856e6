"""Dict keys first set inside a graph loop (issue 35, item 4): in eager code the key exists
after the loop only when the loop ran, which the program decides when it runs, so the key
set in the body is a StateChangeError at the loop's line naming the key and the dict, with
what to write (it was an internal FetchError about a variable defined inside a while block
when the dict held no tensors before the loop). Set before the loop, the same code converts:
eager vs static vs NumPy over 0, 1 and 3 trips, one program, the gradient against finite
differences."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def last_scaled(x, n):
    stats = {}
    for i in range(n):
        stats["last"] = x * i
    return stats["last"]


def counted(x, n):
    stats = {"sum": x * 0.0}
    for i in range(n):
        stats["count"] = stats.get("count", 0) + 1
    return stats["sum"]


@pytest.mark.parametrize("fn", [last_scaled, counted])
def test_a_key_first_set_in_a_graph_loop_is_refused_at_the_loop(fn):
    x = rt.to_tensor([1.0, 2.0])
    fn(x, rt.to_tensor(2))  # eager runs it
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(x, rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(fn, "for i in range(n)"))
    assert "adds the key" in text and "to the dict stats" in text
    assert "Set it before the loop" in text


def running_stats(x, n):
    stats = {"total": rt.zeros([2]), "count": 0, "last": x * 0.0}
    for i in range(n):
        stats["total"] = stats["total"] + x * x * i
        stats["count"] += 1
        stats["last"] = x * i
    return stats["total"] + stats["last"], stats["count"]


def test_keys_set_before_the_loop_convert():
    static = d2s.to_static(running_stats, full_graph=True)
    xv = np.array([1.5, -2.0], "float32")
    for k in (0, 1, 3):
        want = (xv * xv * sum(range(k)) + xv * max(k - 1, 0), k)
        for fn in (running_stats, static):
            y, count = fn(rt.to_tensor(xv), rt.to_tensor(k))
            np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-6)
            assert int(count) == k

        def f(v, k=k):
            return float((v * v * sum(range(k)) + v * max(k - 1, 0)).sum())
        x = rt.to_tensor(xv, stop_gradient=False)
        static(x, rt.to_tensor(k))[0].sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, xv.astype("float64")),
                                   rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 2  # one per stop_gradient of x, for every trip count
