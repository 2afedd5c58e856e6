"""`sum(items, start)` of a list whose length the run decides (a comprehension filtered by a
tensor, a list grown under a tensor `if` in a graph loop), `start` a tensor of another shape
than the items' sum: eager Python gives `start` itself where the list is empty. Returned (also
inside a tuple), the call now gives it there, and the items' sum elsewhere, from one program
(it raised `TypeError: sum() ... got no item` on those inputs before); computing with it
still raises that error on those inputs only (one program value has one shape).

Eager vs converted vs a NumPy reference, over inputs that keep no item and some items."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def kept_rows(x, thr):
    """The rows whose sum passes the threshold, summed (a scalar zero when none do)."""
    rows = [r * 2.0 for r in x if r.sum() > thr]
    return sum(rows, rt.zeros([]))


def kept_rows_ref(x, thr):
    rows = [r * 2 for r in x if r.sum() > thr]
    return sum(rows, np.zeros([], "float32"))


def kept_steps(x, thr):
    """A while loop over the rows as decoding code writes it; the sum in a returned tuple."""
    kept = []
    i = 0
    while i < x.shape[0]:
        if x[i].sum() > thr:
            kept.append(x[i] * x[i])
        i += 1
    return x.mean(), sum(kept, rt.ones([1], "float64"))


def kept_steps_ref(x, thr):
    kept = [r * r for r in x if r.sum() > thr]
    return x.mean(), sum(kept, np.ones([1], "float64"))


def used_after(x, thr):
    total = sum([r for r in x if r.sum() > thr], rt.zeros([]))
    return total * 2


X = np.arange(8, dtype="float32").reshape(2, 4) - 2.0
THRESHOLDS = [-100.0, 0.0, 100.0]  # (both rows, one row, no row kept)


@pytest.mark.parametrize("thr", THRESHOLDS)
def test_returned_sum_is_the_start_where_nothing_was_kept(thr):
    converted = d2s.to_static(kept_rows)
    for t in THRESHOLDS:  # (one program for every input)
        converted(rt.to_tensor(X, stop_gradient=False), rt.to_tensor(t))
    want = kept_rows_ref(X, thr)
    grads = []
    for fn in (kept_rows, converted):
        x = rt.to_tensor(X, stop_gradient=False)
        got = fn(x, rt.to_tensor(thr))
        assert list(got.shape) == list(want.shape) and got.dtype == rt.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert got.stop_gradient is (thr == 100.0)  # (the start: no gradient path)
        if not got.stop_gradient:
            (got * 3.0).sum().backward()
        grads.append(x.grad)
    assert (grads[0] is None) == (grads[1] is None) == (thr == 100.0)
    if grads[1] is not None:  # d(3 * sum of 2 * kept rows)/dx: 6 on the kept rows
        kept = (X.sum(1) > thr)[:, None].astype("float32")
        np.testing.assert_allclose(grads[1].numpy(), grads[0].numpy())
        np.testing.assert_allclose(grads[1].numpy(), np.broadcast_to(6 * kept, X.shape))
    assert len(converted.program_cache) == 1


@pytest.mark.parametrize("thr", THRESHOLDS)
def test_sum_with_another_dtype_in_a_returned_tuple(thr):
    converted = d2s.to_static(kept_steps)
    want = kept_steps_ref(X, thr)
    for fn in (kept_steps, converted):
        mean, total = fn(rt.to_tensor(X), rt.to_tensor(thr))
        np.testing.assert_allclose(mean.numpy(), want[0], rtol=1e-6)
        assert total.dtype.name == want[1].dtype.name
        assert list(total.shape) == list(want[1].shape)
        np.testing.assert_allclose(total.numpy(), want[1], rtol=1e-6)
    for t in THRESHOLDS:
        converted(rt.to_tensor(X), rt.to_tensor(t))
    assert len(converted.program_cache) == 1


def test_computing_with_it_raises_only_where_nothing_was_kept():
    converted = d2s.to_static(used_after)
    np.testing.assert_allclose(converted(rt.to_tensor(X), rt.to_tensor(0.0)).numpy(),
                               used_after(rt.to_tensor(X), rt.to_tensor(0.0)).numpy())
    with pytest.raises(TypeError, match=r"sum\(\) .* got no item"):
        converted(rt.to_tensor(X), rt.to_tensor(100.0))
