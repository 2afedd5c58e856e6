"""OpInfos for runtime/quantization/fake_quant.py. Gradients are straight-through by design
(not the derivative of rounding), so they are tested in tests/train/test_quantization.py."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

from runtime.quantization import fake_quant as Q
from runtime.quantization import int8 as Q8


def _qdq(x, s, bits=8):
    n = 2 ** (bits - 1) - 1
    safe = np.where(s > 0, s, 1.0).astype(x.dtype)
    v = np.clip(x, -safe, safe) * (n / safe)
    out = np.sign(v) * np.floor(np.abs(v) + 0.5) * (safe / n)
    return np.where(s > 0, out, 0.0).astype(x.dtype)


def _abs_max_ref(x, bit_length=8):
    s = np.abs(x).max()
    return _qdq(x, s, bit_length), np.float32(s)


def _channel_ref(x, bit_length=8, quant_axis=0):
    axes = tuple(i for i in range(x.ndim) if i != quant_axis % x.ndim)
    s = np.abs(x).max(axis=axes, keepdims=True)
    return _qdq(x, s, bit_length), s.reshape(-1).astype(np.float32)


def _dequantize_ref(x, scale, bit_length=8, quant_axis=None):
    n = 2 ** (bit_length - 1) - 1
    s = scale.astype(np.float32)
    step = np.where(s > 0, np.where(s > 0, s, 1).astype(np.float32) / n, 0).astype(np.float32)
    if quant_axis is not None:
        shape = [1] * x.ndim
        shape[quant_axis] = -1
        step = step.reshape(shape)
    return x.astype(np.float32) * step.reshape(step.shape if quant_axis is not None else ())


def _int8(rng, *shape):
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def _scale_ref(x, scale, accum, state, moving_rate=0.9):
    state = moving_rate * state + 1.0
    accum = moving_rate * accum + np.abs(x).max()
    return accum / state, accum, state


OPINFOS = [
    OpInfo("fake_quant_dequant_abs_max", Q.fake_quant_dequant_abs_max, _abs_max_ref,
           grad=False, samples=lambda rng: [
               Sample((randn(rng, 3, 4),)), Sample((randn(rng, 7) * 5,), {"bit_length": 4}),
               Sample((np.zeros(3),))],
           error_samples=[ErrorSample((np.ones(2),), {"bit_length": 1}, ValueError,
                                      "fake_quant_dequant_abs_max: bit_length")]),
    OpInfo("fake_channel_wise_quant_dequant_abs_max", Q.fake_channel_wise_quant_dequant_abs_max,
           _channel_ref, grad=False, samples=lambda rng: [
               Sample((randn(rng, 4, 3, 2, 2),)),
               Sample((randn(rng, 5, 6),), {"quant_axis": 1, "bit_length": 6})]),
    OpInfo("moving_average_abs_max_scale", Q.moving_average_abs_max_scale, _scale_ref,
           grad=False, samples=lambda rng: [
               Sample((randn(rng, 3, 4), np.array([0.001]), np.array([1.0]), np.array([1.0]))),
               Sample((randn(rng, 5), np.array([2.0]), np.array([3.0]), np.array([1.9])),
                      {"moving_rate": 0.5})]),
    OpInfo("fake_quant_dequant", Q.fake_quant_dequant, _qdq, grad=False,
           samples=lambda rng: [
               Sample((randn(rng, 3, 4), np.array([1.0]))),
               Sample((randn(rng, 6) * 3, np.array([0.5]), 4))],
           error_samples=[ErrorSample((np.ones(3), np.ones(2)), {}, ValueError,
                                      r"fake_quant_dequant: scale must hold one value, got "
                                      r"shape \[2\]")]),
    OpInfo("dequantize_linear", Q8.dequantize_linear, _dequantize_ref, grad=False,
           dtypes=("float32",), samples=lambda rng: [
               Sample((_int8(rng, 3, 4), np.array([2.5]))),
               Sample((_int8(rng, 4, 3), np.array([1.0, 0.0, 3.0]), 8, 1)),
               Sample((_int8(rng, 2, 3, 2), np.array([0.5, 2.0]), 8, 0))],
           error_samples=[ErrorSample((np.ones(3), np.ones(1)), {}, TypeError,
                                      "dequantize_linear: x must hold integers")]),
]
