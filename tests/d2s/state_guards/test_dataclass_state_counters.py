"""A dataclass passed in as training state whose counter the function advances
(`state.step += 1`, an EMA decay computed from it) was keyed by its field values, so every
call (a new step) traced a new program, without bound. Read only through its fields (and
written), it is keyed by identity as a SimpleNamespace or a dict of counters is: the counter is
program state, fed and written back, one program for every step; fields the caller changes are
still guarded, and a fresh state object per call still finds the program by its values."""
from __future__ import annotations

import dataclasses

import numpy as np

import d2s
import runtime as rt


@dataclasses.dataclass
class TrainState:
    step: int = 0
    warm: bool = False
    base: float = 0.5
    history: list = dataclasses.field(default_factory=list)


def ema_update(x, state):
    state.step += 1
    decay = min(0.99, (1 + state.step) / (10 + state.step))
    if state.step > 2:
        state.warm = True
    state.history.append(state.step)
    return x * decay + state.base


def _ref(x, step, base):
    step += 1
    return x * min(0.99, (1 + step) / (10 + step)) + base


def test_one_state_object_over_steps_keeps_one_program():
    static = d2s.to_static(ema_update)
    es, ss = TrainState(), TrainState()
    for i in range(6):
        x = np.full((3,), float(i), np.float32)
        ref = _ref(x, es.step, es.base)
        e, s = ema_update(rt.to_tensor(x), es), static(rt.to_tensor(x), ss)
        np.testing.assert_allclose(s.numpy(), ref, rtol=1e-6)
        np.testing.assert_allclose(e.numpy(), ref, rtol=1e-6)
        assert s.dtype == e.dtype and s.stop_gradient == e.stop_gradient
        assert ss == es and type(ss.step) is int and type(ss.warm) is bool
    assert es.step == 6 and es.warm is True and es.history == [1, 2, 3, 4, 5, 6]
    assert len(static.program_cache) <= 2  # (the `warm` flag's two values)


def test_a_field_the_caller_changes_is_read_again():
    static = d2s.to_static(ema_update)
    es, ss = TrainState(), TrainState()
    for base in (0.5, 0.5, 2.0, 2.0, -1.0):
        es.base = ss.base = base
        x = np.ones((2,), np.float32)
        e, s = ema_update(rt.to_tensor(x), es), static(rt.to_tensor(x), ss)
        np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6)
        assert ss == es


def test_fresh_state_per_call_gets_its_own_writes():
    static = d2s.to_static(ema_update)
    for i in range(5):
        es, ss = TrainState(step=3), TrainState(step=3)
        x = np.full((2,), float(i), np.float32)
        e, s = ema_update(rt.to_tensor(x), es), static(rt.to_tensor(x), ss)
        np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6)
        assert ss == es == TrainState(step=4, warm=True, history=[4])
    assert len(static.program_cache) == 1
