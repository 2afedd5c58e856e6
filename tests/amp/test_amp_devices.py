"""Honest devices: float16/bfloat16 are emulated on the CPU, so the support queries say False
there and auto_cast warns once; GradScaler's defaults are Paddle 3.3.1's."""
from __future__ import annotations

import warnings

import pytest

import runtime as rt
from runtime.amp import precision


def test_support_queries_on_cpu():
    assert rt.amp.is_float16_supported() is False
    assert rt.amp.is_float16_supported("cpu") is False
    assert rt.amp.is_bfloat16_supported() is False
    assert rt.amp.is_float16_supported("gpu:0") is True


def test_auto_cast_on_cpu_warns_once(monkeypatch):
    monkeypatch.setattr(precision, "_warned", False)
    with pytest.warns(UserWarning, match="accuracy, not for speed"):
        with rt.amp.auto_cast(dtype="bfloat16"):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with rt.amp.auto_cast():
            pass
        with rt.amp.auto_cast(enable=False):
            pass


def test_grad_scaler_defaults_are_paddles():
    s = rt.amp.GradScaler()
    assert (s.get_init_loss_scaling(), s.get_incr_ratio(), s.get_decr_ratio(),
            s.get_incr_every_n_steps(), s.get_decr_every_n_nan_or_inf(),
            s.is_use_dynamic_loss_scaling()) == (2.0 ** 16, 2.0, 0.5, 2000, 1, True)
    assert float(s.get_loss_scaling()) == 2.0 ** 16
    a = rt.amp.AmpScaler()
    assert (a.get_init_loss_scaling(), a.get_incr_every_n_steps(),
            a.get_decr_every_n_nan_or_inf()) == (2.0 ** 15, 1000, 1)
    assert isinstance(a, rt.amp.GradScaler)


@pytest.mark.gpu
def test_bfloat16_auto_cast_on_gpu_is_refused():
    rt.set_device("gpu:0")
    assert rt.amp.is_float16_supported() is True
    with pytest.raises(RuntimeError, match="CuPy has no bfloat16"):
        with rt.amp.auto_cast(dtype="bfloat16"):
            pass
    with rt.amp.auto_cast():
        y = rt.matmul(rt.ones([2, 3]), rt.ones([3, 4]))
    assert y.dtype == "float16"
