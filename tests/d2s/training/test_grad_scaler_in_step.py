"""`GradScaler` inside a converted training step (issue 33): `scaler.scale(loss).backward();
scaler.step(opt); scaler.update()` and Paddle's `scaler.minimize(opt, scaled)` skip the
update on inf/nan gradients and adapt the loss scale per run as eager calls do; the scale is
state the program reads and writes, never the value it had when traced. Eager vs static
vs a NumPy reference, over inputs that take both paths through one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import MLP, assert_no_variable, assert_same_state, make_opt, pair

ONE = np.linspace(-1.0, 1.0, 20, dtype="float32").reshape(5, 4)
INF = np.full((5, 4), np.inf, "float32")
# finite, inf, finite, finite (the scale grows), inf, inf (shrinks twice), finite
INPUTS = [ONE, INF, ONE * 0.5, ONE, ONE * 2.0, INF, INF, ONE]
LABELS = rt.to_tensor(np.array([0, 1, 2, 0, 1], "int64"))


def _scaler():
    return rt.amp.GradScaler(init_loss_scaling=8.0, incr_every_n_steps=2,
                             decr_every_n_nan_or_inf=1)


def step_with_scaler(model, opt, scaler, x, y):
    loss = rt.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    return float(loss), scaler.get_loss_scaling()


def step_with_minimize(model, opt, scaler, x, y):
    loss = rt.nn.functional.cross_entropy(model(x), y)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.minimize(opt, scaled)
    opt.clear_grad(set_to_zero=False)
    return loss


def _fields(scaler):
    return (scaler._scale, scaler._incr_count, scaler._decr_count, scaler._found_inf)


def _run_both(fn, opt_name, **opt_kw):
    (m1, o1), (m2, o2) = pair(MLP, opt_name, **opt_kw)
    s1, s2 = _scaler(), _scaler()
    converted = d2s.to_static(fn)
    for x in INPUTS:
        r1 = fn(m1, o1, s1, rt.to_tensor(x), LABELS)
        r2 = converted(m2, o2, s2, rt.to_tensor(x), LABELS)
        assert _fields(s1) == _fields(s2)
        assert type(r1) is type(r2)
        if isinstance(r1, tuple):
            assert type(r1[0]) is type(r2[0]) is float
            assert r1[1].dtype == r2[1].dtype and float(r1[1]) == float(r2[1])
        assert_same_state((m1, o1), (m2, o2))
    assert len(converted.program_cache) == 1
    assert_no_variable(m2, o2)
    assert s1.state_dict() == s2.state_dict()
    return s2


@pytest.mark.parametrize("opt_name,opt_kw", [
    ("Momentum", {"weight_decay": 0.01}), ("Adam", {}), ("AdamW", {"weight_decay": 0.1})])
def test_step_skips_inf_steps_and_adapts_the_scale_as_eager(opt_name, opt_kw):
    scaler = _run_both(step_with_scaler, opt_name, **opt_kw)
    assert scaler._scale == _reference_scales([not np.isfinite(x).all() for x in INPUTS])[-1]


def test_paddles_minimize_idiom():
    _run_both(step_with_minimize, "Momentum", weight_decay=0.01)


def test_scale_inside_and_update_outside_reads_the_scale_of_each_call():
    """Scaling in the converted forward, stepping outside: the program multiplies by the
    scale in force at each call (it used the traced one, silently, before)."""
    (m1, o1), (m2, o2) = pair(MLP, "SGD")
    s1, s2 = _scaler(), _scaler()

    def forward(model, scaler, x, y):
        return scaler.scale(rt.nn.functional.cross_entropy(model(x), y))

    converted = d2s.to_static(forward)
    for x in INPUTS:
        for f, m, o, s in ((forward, m1, o1, s1), (converted, m2, o2, s2)):
            f(m, s, rt.to_tensor(x), LABELS).backward()
            s.step(o)
            s.update()
            o.clear_grad()
        assert _fields(s1) == _fields(s2)
        assert_same_state((m1, o1), (m2, o2))


def _reference_scales(found: list) -> list:
    """The loss scale after each step, by the rule GradScaler documents."""
    scale, good, out = 8.0, 0, []
    for bad in found:
        if bad:
            scale, good = max(scale * 0.5, 1.0), 0
        else:
            good += 1
            if good == 2:
                scale, good = scale * 2.0, 0
        out.append(scale)
    return out


def test_against_a_numpy_reference():
    """One linear layer, plain SGD: parameters and scales against NumPy."""
    rt.seed(0)
    model = rt.nn.Linear(4, 1)
    opt = make_opt("SGD", model.parameters(), lr=0.1)
    scaler = _scaler()
    w, b = model.weight.numpy().astype("float64"), model.bias.numpy().astype("float64")

    @d2s.to_static
    def step(x):
        loss = (model(x) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        return scaler.get_loss_scaling()

    scales = []
    for x in INPUTS:
        scales.append(float(step(rt.to_tensor(x))))
        if np.isfinite(x).all():
            r = x.astype("float64") @ w + b
            w = w - 0.1 * (2.0 * x.T.astype("float64") @ r / r.size)
            b = b - 0.1 * (2.0 * r.sum(0) / r.size)
    assert scales == _reference_scales([not np.isfinite(x).all() for x in INPUTS])
    np.testing.assert_allclose(model.weight.numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.bias.numpy(), b, rtol=1e-5, atol=1e-6)


def test_unscale_inside_and_step_outside_unscales_once_per_call():
    """`scaler.unscale_(opt)` in the converted function (to read or clip the true
    gradients), `scaler.step(opt)` after it: every call's step sees the gradients unscaled
    once. The unscaled mark was the trace's Python only: later calls unscaled twice."""
    (m1, o1), (m2, o2) = pair(MLP, "Momentum")
    s1, s2 = _scaler(), _scaler()

    def forward(model, opt, scaler, x, y):
        loss = rt.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        return loss

    converted = d2s.to_static(forward)
    for x in INPUTS:
        for f, m, o, s in ((forward, m1, o1, s1), (converted, m2, o2, s2)):
            f(m, o, s, rt.to_tensor(x), LABELS)
            s.step(o)
            s.update()
            o.clear_grad()
        assert _fields(s1) == _fields(s2)
        assert_same_state((m1, o1), (m2, o2))


@pytest.mark.parametrize("field", ["_enable", "_use_dynamic_loss_scaling"])
def test_settings_changed_between_calls_apply_as_eagerly(field):
    """A scaler disabled (or made static) after the step was converted: the next call
    neither scales nor adapts the scale, as eager code; enabled again, it does."""
    (m1, o1), (m2, o2) = pair(MLP, "Momentum", weight_decay=0.01)
    s1, s2 = _scaler(), _scaler()
    converted = d2s.to_static(step_with_scaler)
    for i, x in enumerate(INPUTS * 2):
        for s in (s1, s2):
            setattr(s, field, i % 4 < 2)
        r1 = step_with_scaler(m1, o1, s1, rt.to_tensor(x), LABELS)
        r2 = converted(m2, o2, s2, rt.to_tensor(x), LABELS)
        np.testing.assert_equal([r1[0], float(r1[1])], [r2[0], float(r2[1])], f"call {i}")
        assert _fields(s1) == _fields(s2), f"call {i}"
        assert_same_state((m1, o1), (m2, o2))
    assert len(converted.program_cache) == 2


def step_scaler_under_a_tensor_if(model, opt, scaler, x, y):
    loss = rt.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    if loss.isnan() or loss < 1.08:  # (a step and a scale update on some runs only)
        scaler.step(opt)
        scaler.update()
    opt.clear_grad()
    return float(loss), scaler.get_loss_scaling()


@pytest.mark.parametrize("opt_name,opt_kw", [
    ("Momentum", {"weight_decay": 0.01}), ("AdamW", {"weight_decay": 0.1})])
def test_scaler_step_and_update_under_a_tensor_if(opt_name, opt_kw):
    _run_both(step_scaler_under_a_tensor_if, opt_name, **opt_kw)
