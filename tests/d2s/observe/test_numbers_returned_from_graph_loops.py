"""A `return` inside a loop whose condition is a tensor returns a tuple (or list) that the
loop carries; its items that are Python numbers whose type the run decides get eager's type
(issue 35, refused before):

- `sum(kept)` of a list the loop may leave empty is eager's int start where it is empty and a
  float otherwise ("... from sum() of a list that may be empty" before);
- a number that later trips make a tensor (`gain = 1`, then `gain = gain * h.mean()`) is the
  Python int where the function returns on the first trip or after zero trips, and the tensor
  (with its gradient) where it returns later ("the returned value[1] is i64[] before a loop
  ..." before).

Eager vs converted vs a NumPy reference, over inputs that take each path through one
program: values, Python types, dtypes, `stop_gradient`, gradients."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class Cfg:
    scale = 0.5
    limit = 20.0


def early_exit(x, n_steps, cfg):
    """A refinement loop that stops early once the activation is large."""
    h = x * cfg.scale
    gain = 1
    for _ in range(n_steps):
        if h.sum() > cfg.limit:
            return h, gain
        h = h * 2
        gain = gain * h.mean()
    return h, gain


def early_exit_ref(x, n, cfg):
    h, gain = x * cfg.scale, 1
    for _ in range(n):
        if h.sum() > cfg.limit:
            return h, gain
        h = h * 2
        gain = gain * np.float32(h.mean())
    return h, gain


def kept_confidences(x, n_steps):
    """Confidences of the steps above a threshold, summed when the search stops."""
    kept = []
    h = x
    for _ in range(n_steps):
        conf = float(h.mean())
        if conf > 1.0:
            kept.append(conf)
        h = h * 1.5
        if h.sum() > 30:
            return [h, sum(kept)]
    return [h, sum(kept) * 2]


def kept_confidences_ref(x, n):
    kept, h = [], x
    for _ in range(n):
        conf = float(np.float32(h.mean()))
        if conf > 1.0:
            kept.append(conf)
        h = (h * np.float32(1.5)).astype("float32")
        if h.sum() > 30:
            return [h, sum(kept)]
    return [h, sum(kept) * 2]


EARLY = [(1.0, 0), (1.0, 2), (4.0, 5), (20.0, 3), (1.0, 9)]


@pytest.mark.parametrize("fill,n", EARLY)
def test_number_made_a_tensor_by_later_trips_returned_inside_the_loop(fill, n):
    converted = d2s.to_static(early_exit)
    for f, k in EARLY:  # (one program for every path)
        converted(rt.to_tensor(np.full(3, f, "float32"), stop_gradient=False),
                  rt.to_tensor(k), Cfg())
    x = np.full(3, fill, "float32")
    want_h, want_gain = early_exit_ref(x, n, Cfg())
    results = []
    for fn in (early_exit, converted):
        xt = rt.to_tensor(x, stop_gradient=False)
        h, gain = fn(xt, rt.to_tensor(n), Cfg())
        np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-6)
        assert type(gain) is type(want_gain) if type(want_gain) is int else rt.is_tensor(gain)
        if type(want_gain) is int:
            assert gain == want_gain
            loss = h.sum()
        else:
            np.testing.assert_allclose(gain.numpy(), want_gain, rtol=1e-6)
            assert gain.dtype == rt.float32 and gain.stop_gradient is False
            loss = h.sum() + gain
        loss.backward()
        results.append(xt.grad.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
    # the gradient of the path this input took, against finite differences
    eps, fd = 1e-2, np.zeros(3)
    for i in range(3):
        d = np.zeros(3, "float32")
        d[i] = eps
        lo, hi = (early_exit_ref(x + s * d, n, Cfg()) for s in (-1, 1))
        fd[i] = ((hi[0].sum() + hi[1]) - (lo[0].sum() + lo[1])) / (2 * eps)
    np.testing.assert_allclose(results[1], fd, rtol=1e-2, atol=1e-2)
    assert len(converted.program_cache) == 1


KEPT = [(1.0, 0), (0.5, 1), (2.0, 9), (0.1, 2), (2.0, 1)]


@pytest.mark.parametrize("fill,n", KEPT)
def test_sum_of_a_list_that_may_be_empty_returned_inside_the_loop(fill, n):
    converted = d2s.to_static(kept_confidences)
    x = np.full(3, fill, "float32")
    want = kept_confidences_ref(x, n)
    for fn in (kept_confidences, converted):
        got = fn(rt.to_tensor(x), rt.to_tensor(n))
        assert type(got) is list and len(got) == 2
        np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-6)
        assert type(got[1]) is type(want[1])  # (the int 0 where nothing was kept)
        assert got[1] == pytest.approx(want[1], rel=1e-6)
    for f, k in KEPT:
        converted(rt.to_tensor(np.full(3, f, "float32")), rt.to_tensor(k))
    assert len(converted.program_cache) == 1


def running_stats(x, n_steps):
    """State kept as a tuple, as recurrent code writes it: the count starts as a Python 0
    and the body makes it a tensor."""
    state = (x, 0)
    for _ in range(n_steps):
        h, total = state
        state = (h * 2, total + h.mean())
    return state


def running_stats_ref(x, n):
    h, total = x, 0
    for _ in range(n):
        h, total = h * 2, total + np.float32(h.mean())
    return h, total


@pytest.mark.parametrize("n", [0, 1, 3])
def test_number_in_a_carried_tuple_made_a_tensor_by_the_body(n):
    converted = d2s.to_static(running_stats)
    x = np.arange(3, dtype="float32") + 1
    want_h, want_total = running_stats_ref(x, n)
    grads = []
    for fn in (running_stats, converted):
        xt = rt.to_tensor(x, stop_gradient=False)
        h, total = fn(xt, rt.to_tensor(n))
        np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-6)
        if n == 0:
            assert type(total) is int and total == 0
            loss = h.sum()
        else:
            assert rt.is_tensor(total) and total.dtype == rt.float32
            assert total.stop_gradient is False
            np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-6)
            loss = h.sum() + total
        loss.backward()
        grads.append(xt.grad.numpy())
    # d(h.sum() + total)/dx: 2**n per item, plus sum_k 2**k / 3 for k < n
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    np.testing.assert_allclose(grads[1], np.full(3, 2.0 ** n + (2.0 ** n - 1) / 3), rtol=1e-6)
    for k in (0, 1, 3):
        converted(rt.to_tensor(x, stop_gradient=False), rt.to_tensor(k))
    assert len(converted.program_cache) == 1
