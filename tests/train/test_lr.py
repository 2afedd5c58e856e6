"""Learning-rate schedulers vs hand-computed sequences (Paddle 2.x semantics)."""
from __future__ import annotations

import math

import pytest

from runtime.optimizer import lr


def _seq(sched, n):
    out = []
    for _ in range(n):
        out.append(sched())
        sched.step()
    return out


def test_step_decay():
    assert _seq(lr.StepDecay(0.5, step_size=3, gamma=0.1), 7) == pytest.approx(
        [0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005])


def test_multistep_and_piecewise():
    assert _seq(lr.MultiStepDecay(1.0, milestones=[2, 4], gamma=0.5), 6) == pytest.approx(
        [1.0, 1.0, 0.5, 0.5, 0.25, 0.25])
    assert _seq(lr.PiecewiseDecay([1, 3], [0.3, 0.2, 0.1]), 5) == pytest.approx(
        [0.3, 0.2, 0.2, 0.1, 0.1])


def test_exponential_decay():
    assert _seq(lr.ExponentialDecay(0.2, gamma=0.9), 5) == pytest.approx(
        [0.2 * 0.9 ** e for e in range(5)])


def test_cosine_annealing_matches_closed_form_and_restarts_upward():
    base, eta, t = 0.1, 0.01, 4
    got = _seq(lr.CosineAnnealingDecay(base, T_max=t, eta_min=eta), 7)
    want = [eta + (base - eta) * (1 + math.cos(math.pi * e / t)) / 2 for e in range(t + 1)]
    assert got[:t + 1] == pytest.approx(want)
    assert got[t] == pytest.approx(eta)
    assert got[t + 1] > got[t] and got[t + 2] > got[t + 1]  # past T_max it climbs back
    sched = lr.CosineAnnealingDecay(base, T_max=t, eta_min=eta)
    sched.step(2)  # jumping uses the closed form
    assert sched() == pytest.approx(want[2])


def test_linear_warmup_then_float_or_scheduler():
    assert _seq(lr.LinearWarmup(0.5, warmup_steps=4, start_lr=0.0, end_lr=0.4), 6) == \
        pytest.approx([0.0, 0.1, 0.2, 0.3, 0.5, 0.5])
    inner = lr.StepDecay(0.8, step_size=2, gamma=0.5)
    got = _seq(lr.LinearWarmup(inner, warmup_steps=2, start_lr=0.2, end_lr=0.6), 7)
    assert got == pytest.approx([0.2, 0.4, 0.8, 0.8, 0.4, 0.4, 0.2])


def test_polynomial_lambda_noam():
    assert _seq(lr.PolynomialDecay(1.0, decay_steps=4, end_lr=0.0, power=2.0), 6) == \
        pytest.approx([1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0])
    assert _seq(lr.LambdaDecay(2.0, lambda e: 1 / (e + 1)), 3) == pytest.approx(
        [2.0, 1.0, 2 / 3])
    got = _seq(lr.NoamDecay(d_model=16, warmup_steps=4), 7)
    want = [0.0] + [16 ** -0.5 * min(e ** -0.5, e * 4 ** -1.5) for e in range(1, 7)]
    assert got == pytest.approx(want)
    assert got.index(max(got)) == 4  # peaks at the end of warm-up


def test_state_dict_round_trip():
    a = lr.LinearWarmup(lr.ExponentialDecay(1.0, 0.5), warmup_steps=2, start_lr=0, end_lr=1)
    _seq(a, 5)
    b = lr.LinearWarmup(lr.ExponentialDecay(1.0, 0.5), warmup_steps=2, start_lr=0, end_lr=1)
    b.set_state_dict(a.state_dict())
    assert b.last_epoch == a.last_epoch == 5
    assert _seq(b, 3) == pytest.approx(_seq(a, 3))


def test_var_follows_steps():
    sched = lr.StepDecay(1.0, step_size=1, gamma=0.5)
    var = sched.var()
    assert var.dtype == "float32" and var.shape == [] and float(var) == 1.0
    sched.step()
    assert float(var) == 0.5 and var.persistable


def test_errors():
    with pytest.raises(ValueError, match="step_size"):
        lr.StepDecay(0.1, step_size=0)
    with pytest.raises(ValueError, match="T_max"):
        lr.CosineAnnealingDecay(0.1, T_max=0)
    with pytest.raises(ValueError, match="values"):
        lr.PiecewiseDecay([1, 2], [0.1])
    with pytest.raises(TypeError, match="learning_rate"):
        lr.ExponentialDecay("0.1", 0.9)
