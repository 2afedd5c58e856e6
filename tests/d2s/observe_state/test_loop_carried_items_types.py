"""Items of dicts and lists a graph loop carries keep eager's Python type per run (issue 33),
as names do (`loop_numpy_values`, `loop_number_kinds`): a NumPy value (what `x.numpy()`
gives) stays a NumPy scalar or array after the loop (was a Tensor); an item that is a Python
number before the loop and a tensor or a NumPy scalar after its body, whose type after zero
trips eager keeps, is refused at the loop, naming the item (was a 0-d Tensor after zero trips,
silently). Eager vs static vs NumPy over trip counts 0 and 2 through one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as paddle
from d2s.errors import ConversionError

X = np.arange(6, dtype="float32").reshape(3, 2)


class Meter:
    """Sums per-row statistics as metric helpers do, in a dict and a list it keeps."""

    def __call__(self, x, n):
        rows = x.numpy()
        stats = {"total": rows[0].sum(), "last": rows[0]}
        hist = [rows[0].max(), rows[0]]
        for i in range(n):
            stats["total"] += rows[i].sum()
            stats["last"] = stats["last"] + rows[i]
            hist[0] = np.maximum(hist[0], rows[i].max())
        return stats, hist


def _reference(k):
    total, last, top = X[0].sum(), X[0].copy(), X[0].max()
    for i in range(k):
        total, last, top = total + X[i].sum(), last + X[i], max(top, X[i].max())
    return total, last, top


def test_numpy_items_stay_numpy_after_the_loop():
    meter = Meter()
    static = d2s.to_static(meter.__call__)
    for k in (0, 2):
        total, last, top = _reference(k)
        for stats, hist in (meter(paddle.to_tensor(X), paddle.to_tensor(k)),
                            static(paddle.to_tensor(X), paddle.to_tensor(k))):
            assert list(stats) == ["total", "last"] and len(hist) == 2
            assert type(stats["total"]) is np.float32 and stats["total"] == total
            assert type(stats["last"]) is np.ndarray and stats["last"].dtype == np.float32
            np.testing.assert_array_equal(stats["last"], last)
            assert type(hist[0]) is np.float32 and hist[0] == top
            assert type(hist[1]) is np.ndarray


def numpy_sum_into_float(x, n):
    rows = x.numpy()
    stats = {"total": 0.0}
    for i in range(n):
        stats["total"] += rows[i].sum()
    return stats


def tensor_sum_into_float(x, n):
    stats = {"total": 0.0, "count": 0}
    for i in range(n):
        stats["total"] += x[i].sum()
        stats["count"] += 1
    return stats


@pytest.mark.parametrize("fn, kind", [(numpy_sum_into_float, "a NumPy scalar after")])
def test_python_number_items_that_become_other_types_are_refused(fn, kind):
    eager = [fn(paddle.to_tensor(X), paddle.to_tensor(k)) for k in (0, 2)]
    assert type(eager[0]["total"]) is float and type(eager[1]["total"]) is not float
    static = d2s.to_static(fn)
    for k in (0, 2):
        with pytest.raises(ConversionError) as info:
            static(paddle.to_tensor(X), paddle.to_tensor(k))
        text = str(info.value)
        assert "'stats['total']' is " in text and kind in text
        assert "for i in range(n):" in text and "Variable" not in text


def test_python_number_items_that_become_tensors_are_the_number_after_zero_trips():
    """(Was refused like the NumPy case above; the item now carries whether it is still the
    number, as a local name does.)"""
    static = d2s.to_static(tensor_sum_into_float)
    for k in (0, 2, 3):
        for got in (tensor_sum_into_float(paddle.to_tensor(X), paddle.to_tensor(k)),
                    static(paddle.to_tensor(X), paddle.to_tensor(k))):
            assert got["count"] == k and type(got["count"]) is int
            if k:
                assert isinstance(got["total"], paddle.Tensor)
                assert got["total"].item() == X[:k].sum()
            else:
                assert type(got["total"]) is float and got["total"] == 0.0
    assert len(static.program_cache) == 1


def test_python_number_items_kept_numbers_still_convert():
    def count(x, n):
        stats = {"total": 0.0, "count": 0}
        for i in range(n):
            stats["total"] = stats["total"] + 0.5
            stats["count"] += 1
        return stats

    static = d2s.to_static(count)
    for k in (0, 2):
        want = {"total": 0.5 * k, "count": k}
        for got in (count(paddle.to_tensor(X), paddle.to_tensor(k)),
                    static(paddle.to_tensor(X), paddle.to_tensor(k))):
            assert got == want and type(got["total"]) is float and type(got["count"]) is int
