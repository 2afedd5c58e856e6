"""Python dict items updated in a graph loop where the dict is no plain local (issues 33 and
35): a dict held by a Layer attribute (`self.stats["loss"] += loss`), nested in one
(`self.state["ema"]["loss"]`), changed by a helper the loop body calls (`add_to(stats, v)`),
and an int item the loop makes a float (`d["n"] = 0`, then `d["n"] += 0.5`). Each was
refused (a `ConversionError` for the tensor item on an attribute, a dtype `TypeError` for
the nested and the helper's Python floats and for the int made a float, a `StateChangeError`
for the helper's tensor) and now gives eager's items: after zero trips the number of its
entry type, after others the body's number or tensor, in the caller's objects.

Eager vs converted vs a NumPy reference, with 0, 1 and several trips through one program,
the Python type of each item, and a second model / dict for calls that start from the
state a call left."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import d2s
import runtime as rt

DATA = (np.arange(15, dtype="float32").reshape(5, 3) * 0.37 - 1.0).astype("float32")


def _same(got, want):
    """Items compared by Python type and value (a tensor: its dtype and values)."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, rt.Tensor):
        assert got.dtype == want.dtype and got.stop_gradient == want.stop_gradient
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    else:
        assert got == pytest.approx(want, rel=1e-9), (got, want)


class Trainer(rt.nn.Layer):
    """A training loop's bookkeeping: a stats dict on the Layer, a Python number from
    `.item()`, a step count and the summed loss tensor."""

    def __init__(self):
        super().__init__()
        self.stats = {"loss": 0.0, "steps": 0, "total": 0.0}
        self.state = {"ema": {"loss": 0.0, "decay": 0.9}, "seen": 0}

    def forward(self, x, n):
        h = x * 2.0
        for i in range(n):
            loss = (h[i] ** 2).mean()
            self.stats["loss"] += loss.item()
            self.stats["steps"] += 1
            self.stats["total"] += loss
            ema = self.state["ema"]
            self.state["ema"]["loss"] = ema["decay"] * ema["loss"] + (1 - ema["decay"]) * \
                loss.item()
            self.state["seen"] += 1
        return h.sum()


def _trainer_reference(stats, state, n):
    stats, state = dict(stats), {"ema": dict(state["ema"]), "seen": state["seen"]}
    for i in range(n):
        loss = float(((DATA[i] * 2.0) ** 2).mean(dtype="float32"))
        stats["loss"] += loss
        stats["steps"] += 1
        stats["total"] = rt.to_tensor(np.float32(float(stats["total"]) + loss)) if n else 0.0
        state["ema"]["loss"] = 0.9 * state["ema"]["loss"] + (1 - 0.9) * loss
        state["seen"] += 1
    return stats, state


def test_a_layer_s_stats_dict_grown_in_a_graph_loop():
    eager, layer = Trainer(), Trainer()
    static = d2s.to_static(layer)
    x = rt.to_tensor(DATA)
    for n in (0, 0, 1):  # (a call after a call: what the first left)
        want_stats, want_state = _trainer_reference(eager.stats, eager.state, n)
        assert float(eager(x, rt.to_tensor(n))) == float(static(x, rt.to_tensor(n)))
        for model in (eager, layer):
            _same(model.stats, want_stats)
            _same(model.state, want_state)
    assert type(layer.stats["total"]) is rt.Tensor  # (the tensor after a trip)
    assert static.forward.program_cache.traces == 1
    for n in (3, 0, 4):  # (from the tensor: one program more)
        want_stats, want_state = _trainer_reference(eager.stats, eager.state, n)
        eager(x, rt.to_tensor(n))
        static(x, rt.to_tensor(n))
        for model in (eager, layer):
            _same(model.stats, want_stats)
            _same(model.state, want_state)
    assert static.forward.program_cache.traces == 2


@pytest.mark.parametrize("order", [(0, 3, 1), (3, 0, 2), (1, 1, 0)])
def test_a_fresh_layer_per_trip_count(order):
    """Zero trips leave the Python float, others the tensor (one program per start state)."""
    for n in order:
        eager, layer = Trainer(), Trainer()
        static = d2s.to_static(layer)
        x = rt.to_tensor(DATA)
        eager(x, rt.to_tensor(n))
        static(x, rt.to_tensor(n))
        want_stats, want_state = _trainer_reference(Trainer().stats, Trainer().state, n)
        _same(layer.stats, want_stats)
        _same(eager.stats, want_stats)
        _same(layer.state, want_state)
        assert type(layer.stats["total"]) is (float if n == 0 else rt.Tensor)


def test_the_caller_s_numbers_set_between_calls():
    """What the dict holds when a call starts is what the program starts from (no number
    of an earlier call kept as a constant)."""
    eager, layer = Trainer(), Trainer()
    static = d2s.to_static(layer)
    x = rt.to_tensor(DATA)
    for n, total, loss, seen in ((0, 0.0, 0.0, 0), (0, 2.5, 1.5, 3), (2, 2.5, 1.5, 3),
                                 (0, 0.5, 0.0, 0), (1, 0.5, 0.0, 0)):
        for model in (eager, layer):
            model.stats.update(total=total, loss=loss)
            model.state["seen"] = seen
        want_stats, want_state = _trainer_reference(eager.stats, eager.state, n)
        eager(x, rt.to_tensor(n))
        static(x, rt.to_tensor(n))
        for model in (eager, layer):
            _same(model.stats, want_stats)
            _same(model.state, want_state)


def add_to(stats, key, value):
    stats[key] += value


def meter_update(meter, value):
    """A metric meter as evaluation code writes it."""
    meter["sum"] += value
    meter["n"] += 1


def evaluate(x, n, stats, meter):
    for i in range(n):
        row = x[i]
        add_to(stats, "loss", row.sum().item())
        add_to(stats, "total", row.sum())
        meter_update(meter, float(row.max()))
    return x.mean()


def _evaluate_reference(n):
    stats, meter = {"loss": 0.0, "total": 0.0}, {"sum": 0.0, "n": 0}
    for i in range(n):
        stats["loss"] += float(DATA[i].sum())
        meter["sum"] += float(DATA[i].max())
        meter["n"] += 1
    if n:
        stats["total"] = rt.to_tensor(DATA[:n].sum(1).cumsum(dtype="float32")[-1])
    return stats, meter


def test_a_helper_updates_the_caller_s_dicts_in_a_graph_loop():
    static = d2s.to_static(evaluate)
    x = rt.to_tensor(DATA)
    for n in (0, 3, 1, 5, 0):
        want = _evaluate_reference(n)
        for fn in (evaluate, static):
            stats, meter = {"loss": 0.0, "total": 0.0}, {"sum": 0.0, "n": 0}
            out = fn(x, rt.to_tensor(n), stats, meter)
            assert float(out) == pytest.approx(float(DATA.mean()))
            _same(stats, want[0])
            _same(meter, want[1])
    assert static.program_cache.traces == 1


def running_mean(x, n, d):
    counts = {"n": 0, "seen": 0}
    for i in range(n):
        counts["n"] += 0.5
        counts["seen"] += 1
        d["n"] += x[i].mean().item()
    return counts


@pytest.mark.parametrize("n", [0, 1, 4])
def test_an_int_item_the_loop_makes_a_float(n):
    static = d2s.to_static(running_mean)
    want_counts = {"n": 0.5 * n if n else 0, "seen": n}
    want_d = {"n": float(sum(float(DATA[i].mean()) for i in range(n))) if n else 0}
    for fn in (running_mean, static, static):
        d = {"n": 0}
        got = fn(rt.to_tensor(DATA), rt.to_tensor(n), d)
        _same(got, want_counts)
        _same(d, want_d)


def test_an_int_item_the_loop_makes_a_float_one_program():
    static = d2s.to_static(running_mean)
    for n in (0, 2, 0, 3):
        d = {"n": 0}
        counts = static(rt.to_tensor(DATA), rt.to_tensor(n), d)
        assert type(counts["n"]) is (int if n == 0 else float)
        assert type(d["n"]) is (int if n == 0 else float)
    assert static.program_cache.traces == 1


def count(counts, key, weight):
    counts[key] += weight


def weighted_counts(x, n, counts):
    """A helper makes the caller's int item a float on each trip (`counts["n"] += 0.5`)."""
    for i in range(n):
        count(counts, "n", 0.5)
        count(counts, "rows", 1)
        if x[i].sum() > 3:  # (a tensor `if`: the float only on the runs that add)
            count(counts, "big", 0.25)
    return x.sum()


def test_a_helper_makes_the_caller_s_int_item_a_float():
    static = d2s.to_static(weighted_counts)
    for n in (0, 1, 4, 0, 5, 2):
        big = sum(0.25 for i in range(n) if DATA[i].sum() > 3)
        want = {"n": 0.5 * n if n else 0, "rows": n, "big": big if big else 0}
        for fn in (weighted_counts, static):
            counts = {"n": 0, "rows": 0, "big": 0}
            fn(rt.to_tensor(DATA), rt.to_tensor(n), counts)
            _same(counts, want)
    assert static.program_cache.traces == 1


def decayed(x, n, ema):
    i = rt.to_tensor(0)
    while i < n:  # (a tensor `while`)
        ema["avg"]["loss"] = 0.5 * ema["avg"]["loss"] + x[i].sum().item()
        ema["avg"]["steps"] += 1
        i += 1
    return i


def test_a_nested_dict_passed_in_updated_in_a_tensor_while():
    static = d2s.to_static(decayed)
    for n in (0, 2, 5, 1):
        want = {"avg": {"loss": 0.0, "steps": 0}}
        for i in range(n):
            want["avg"]["loss"] = 0.5 * want["avg"]["loss"] + float(DATA[i].sum())
            want["avg"]["steps"] += 1
        for fn in (decayed, static):
            ema = {"avg": {"loss": 0.0, "steps": 0}}
            assert int(fn(rt.to_tensor(DATA), rt.to_tensor(n), ema)) == n
            _same(ema, want)
    assert static.program_cache.traces == 1
