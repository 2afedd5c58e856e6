"""Python numbers and errors made by converted code are what eager makes (issue 33):

- items of a dict (local or passed in) that a graph loop grows by Python numbers
  (`stats["loss"] += loss.item()`, `stats["steps"] += 1`) are Python numbers of Python's
  precision after the loop, written back to the caller's dict (were refused with a dtype
  message for `.item()` values, and summed in float32 for `+= 0.1`); items a graph loop
  makes tensors (`stats["loss"] += loss`) are the starting number after zero trips (or
  trips whose tensor `if` never added) and the tensor after others, as a local name's are
  (were refused);
- a bare `raise` in an `except` clause that may catch different run-time errors re-raises the
  run's error (was refused with a message about `except ... as name`).

Eager vs converted vs a reference, over inputs that take different paths (zero trips,
several trips) through one program."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt


class Tracker:
    def __init__(self):
        self.failures = 0


def checked_scale(x, limit, tracker):
    """A guard as training scripts write it: count the failure, then re-raise it."""
    try:
        h = x * 2
        if h.sum() > limit:
            raise ValueError("activation sum too large")
        if h.min() < limit - 200:
            raise OverflowError("activation too small")
    except (ValueError, ArithmeticError):
        tracker.failures += 1
        raise
    return h


def _outcome(fn, x, limit):
    tracker = Tracker()
    try:
        out = fn(x, rt.to_tensor(limit), tracker)
    except Exception as e:  # noqa: BLE001  (the outcome compared)
        return type(e), str(e), e.__context__, tracker.failures
    return out.numpy(), tracker.failures


@pytest.mark.parametrize("limit,want", [
    (100.0, (ValueError, "activation sum too large", None, 1)),
    (-100.0, (ValueError, "activation sum too large", None, 1)),
    (1000.0, (OverflowError, "activation too small", None, 1)),
])
def test_bare_raise_re_raises_the_run_s_error(limit, want):
    x = rt.to_tensor(np.arange(12, dtype="float32").reshape(4, 3))
    converted = d2s.to_static(checked_scale)
    assert _outcome(checked_scale, x, limit) == want
    for _ in range(2):
        assert _outcome(converted, x, limit) == want
    assert len(converted.program_cache) == 1


def test_bare_raise_not_reached_returns_the_value():
    x = rt.to_tensor(np.arange(12, dtype="float32").reshape(4, 3) - 20)
    converted = d2s.to_static(checked_scale)
    for fn in (checked_scale, converted):
        value, failures = _outcome(fn, x, 10.0)
        np.testing.assert_array_equal(value, (np.arange(12).reshape(4, 3) - 20) * 2)
        assert failures == 0


def epoch_stats(x, n_batches, stats):
    """An evaluation loop as training scripts write it: a dict passed in and a local one,
    grown by Python numbers in a loop over a tensor count."""
    local = {"seen": 0, "lr": 0.1, "decayed": 0.0, "any_big": False}
    for i in range(n_batches):
        row = x[i]
        stats["loss"] += row.sum().item()
        stats["steps"] += 1
        local["seen"] += int(row.argmax())
        local["decayed"] += local["lr"] * 0.1
        local["any_big"] = local["any_big"] or bool(row.max() > 7)
    return local


def _epoch_reference(x, n):
    stats, local = {"loss": 0.0, "steps": 0}, {"seen": 0, "lr": 0.1, "decayed": 0.0,
                                                 "any_big": False}
    for i in range(n):
        stats["loss"] += float(x[i].sum())
        stats["steps"] += 1
        local["seen"] += int(x[i].argmax())
        local["decayed"] += 0.1 * 0.1
        local["any_big"] = local["any_big"] or bool(x[i].max() > 7)
    return stats, local


def _same_python(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same_python(got[k], want[k])
    else:
        assert got == want, (got, want)  # (exact: Python's float64 sums, not float32)


def test_dict_items_grown_by_python_numbers_in_a_graph_loop():
    data = (np.arange(12, dtype="float32").reshape(4, 3) * 0.37).astype("float32")
    x = rt.to_tensor(data)
    converted = d2s.to_static(epoch_stats)
    for n in (3, 0, 4, 1):  # (zero trips and several, one program)
        want = _epoch_reference(data, n)
        for fn in (epoch_stats, converted):
            stats = {"loss": 0.0, "steps": 0}
            local = fn(x, rt.to_tensor(n), stats)
            _same_python((stats, local), want)
    assert len(converted.program_cache) == 1


def accumulate_losses(x, n_batches, stats):
    """Losses summed into a dict of Python zeros, some batches skipped by a tensor `if`."""
    local = {"kept": 0.0, "count": 0}
    for i in range(n_batches):
        loss = (x[i] * 2).mean()
        stats["loss"] += loss
        if x[i].sum() > 5:
            local["kept"] = local["kept"] + loss
        local["count"] += 1
    return local


def _losses_reference(data, n):
    loss, kept = 0.0, 0.0
    for i in range(n):
        loss += float((data[i] * 2).mean())
        if data[i].sum() > 5:
            kept += float((data[i] * 2).mean())
    return loss, kept


@pytest.mark.parametrize("n", [0, 1, 3])
def test_dict_items_that_a_graph_loop_makes_tensors(n):
    data = np.arange(12, dtype="float32").reshape(4, 3)
    converted = d2s.to_static(accumulate_losses)
    want_loss, want_kept = _losses_reference(data, n)
    grads = []
    for fn in (accumulate_losses, converted, converted):
        x = rt.to_tensor(data, stop_gradient=False)
        stats = {"loss": 0.0}
        local = fn(x, rt.to_tensor(n), stats)
        assert local["count"] == n and type(local["count"]) is int
        for got, want, tensor in ((stats["loss"], want_loss, n > 0),
                                  (local["kept"], want_kept, n > 1)):
            if tensor:  # (eager: the tensor from the first trip that added)
                assert isinstance(got, rt.Tensor) and got.stop_gradient is False
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
            else:  # (no trip added: the Python number the loop started from)
                assert type(got) is float and got == 0.0
        if n:
            stats["loss"].backward()
            grads.append(x.grad.numpy())
    for g in grads[1:]:
        np.testing.assert_array_equal(g, grads[0])
    assert len(converted.program_cache) == 1


def metrics_json(x, n_batches):
    """A metrics line as training scripts log it: json.dumps of computed numbers."""
    correct, total = 0, 0.0
    for i in range(n_batches):
        correct += int(x[i].argmax() == 2)
        total += x[i].mean().item()
    metrics = {"step": int(n_batches), "loss": (x * 0.1).sum().item(),
               "finite": bool(rt.isfinite(x).all()), "counts": [correct, total],
               "ratio": float(x.min() * float("nan"))}
    return (json.dumps(metrics), json.dumps(metrics, indent=2, sort_keys=True),
            json.dumps([x.max().item()], separators=(",", ":")))


def _metrics_reference(data, n):
    correct = sum(int(data[i].argmax() == 2) for i in range(n))
    total = 0.0
    for i in range(n):
        total += float(data[i].mean())
    metrics = {"step": n, "loss": float((data * np.float32(0.1)).sum()),
               "finite": True, "counts": [correct, total], "ratio": float("nan")}
    return (json.dumps(metrics), json.dumps(metrics, indent=2, sort_keys=True),
            json.dumps([float(data.max())], separators=(",", ":")))


def test_json_dumps_of_computed_numbers_is_eager_s_text():
    data = np.arange(12, dtype="float32").reshape(4, 3) * 0.25
    converted = d2s.to_static(metrics_json)
    for n in (0, 3):  # (zero trips and several, one program)
        want = _metrics_reference(data, n)
        for fn in (metrics_json, converted):
            got = fn(rt.to_tensor(data), rt.to_tensor(n))
            assert all(type(t) is str for t in got) and got == want, got
    assert len(converted.program_cache) == 1


def test_json_dumps_of_a_tensor_raises_eager_s_error():
    def dump(x):
        return json.dumps({"t": x.sum()})
    for fn in (dump, d2s.to_static(dump)):
        with pytest.raises(TypeError, match="Object of type Tensor is not JSON serializable"):
            fn(rt.to_tensor(np.ones(3, "float32")))


def ppo_statistics(ratio, n_epochs, clip_coef):
    """CleanRL's logged PPO statistics: `.item()` floats in Python lists, reduced by NumPy
    (a list grown in a loop over a tensor count, and a list of one made in place)."""
    clipfracs, flags = [], []
    for i in range(n_epochs):
        clipfracs.append(((ratio[i] - 1.0).abs() > clip_coef).astype("float32").mean().item())
        flags.append(bool(ratio[i].max() > 1.5))
    approx = [((ratio - 1) - ratio.log()).mean().item(), ratio.max().item()]
    return {"clipfrac": np.mean(clipfracs), "clipfrac_std": np.std(clipfracs),
            "clipfrac_sum": np.sum(clipfracs), "flagged": np.mean(flags),
            "approx_kl": np.mean(approx), "ratio_max": np.max(approx)}


def _ppo_reference(ratio, n, clip_coef):
    clipfracs = [float((np.abs(ratio[i] - 1.0) > clip_coef).astype("float32").mean())
                 for i in range(n)]
    flags = [bool(ratio[i].max() > 1.5) for i in range(n)]
    approx = [float(((ratio - 1) - np.log(ratio)).mean()), float(ratio.max())]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"clipfrac": np.mean(clipfracs), "clipfrac_std": np.std(clipfracs),
                "clipfrac_sum": np.sum(clipfracs), "flagged": np.mean(flags),
                "approx_kl": np.mean(approx), "ratio_max": np.max(approx)}


def test_numpy_reductions_of_lists_of_computed_numbers():
    ratio = np.array([[0.7, 1.1, 1.3], [1.9, 1.0, 0.95], [1.25, 0.5, 1.05]], "float32")
    converted = d2s.to_static(ppo_statistics)
    for n in (3, 0, 2):  # (an empty list: NumPy's nan, float64 sum)
        want = _ppo_reference(ratio, n, 0.2)
        for fn in (ppo_statistics, converted):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (the mean of [])
                got = fn(rt.to_tensor(ratio), rt.to_tensor(n), 0.2)
            assert list(got) == list(want)
            for k in want:
                assert type(got[k]) is np.float64, (k, type(got[k]))
                np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
    assert len(converted.program_cache) == 1


def test_numpy_sum_of_a_run_sized_list_of_ints_is_refused():
    """Eager: int64 where the list has items, float64 for `[]`; only the run knows."""
    def count(x, n):
        hits = []
        for i in range(n):
            hits.append(int(x[i].argmax()))
        return np.sum(hits)
    with pytest.raises(TypeError, match=r"np.sum\(\) of a list whose length only the run decides"):
        d2s.to_static(count)(rt.to_tensor(np.ones((3, 2), "float32")), rt.to_tensor(2))


def numpy_accumulators(x, n_batches):
    """Accumulators started as NumPy scalars (metric code: `np.float32(0)`), and a Python
    float scaled by a NumPy constant, in a loop over a tensor count."""
    a = x.numpy()
    loss32, loss64, steps = np.float32(0), np.float64(0.0), np.int64(0)
    weighted, picked = 0.0, 0.0
    for i in range(n_batches):
        loss32 += x[i].sum().item()  # (NEP 50: np.float32 + a Python float is np.float32)
        loss64 += x[i].mean().item()
        steps += 1
        weighted += x[i].max().item() * np.float64(0.5)  # (a Python float: np.float64)
        picked += a[i].sum()  # (np.float32 after a trip, the float after none)
    return (loss32, loss64, steps, weighted, isinstance(weighted, float),
            isinstance(picked, float), isinstance(picked, np.floating),
            isinstance(picked, (float, np.floating)), picked)


def _accumulators_reference(data, n):
    loss32, loss64, steps = np.float32(0), np.float64(0.0), np.int64(0)
    weighted, picked = 0.0, 0.0
    for i in range(n):
        loss32 += float(data[i].sum())
        loss64 += float(data[i].mean())
        steps += 1
        weighted += float(data[i].max()) * np.float64(0.5)
        picked += data[i].sum()
    return (loss32, loss64, steps, weighted, isinstance(weighted, float),
            isinstance(picked, float), isinstance(picked, np.floating),
            isinstance(picked, (float, np.floating)), picked)


def test_numpy_scalar_accumulators_keep_eager_s_types():
    data = np.arange(12, dtype="float32").reshape(4, 3) * 0.3
    converted = d2s.to_static(numpy_accumulators)
    for n in (3, 0, 2):
        want = _accumulators_reference(data, n)
        assert want[5] is (n == 0)  # (the float after zero trips, np.float32 after others)
        for fn in (numpy_accumulators, converted):
            got = fn(rt.to_tensor(data), rt.to_tensor(n))
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                assert type(g) is type(w), (n, got, want)
                assert g == w, (n, got, want)
    assert len(converted.program_cache) == 1
