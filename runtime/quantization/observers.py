"""Observers for post-training quantization: layers that pass their input through unchanged
and record what they saw, so `convert` can pick a scale (Paddle's `paddle.quantization`
observers; PaddleSlim's `HistObserver` for the percentile rule).

Every observer and quanter answers the same three questions `convert` asks:
`scales()` (the abs-max scale(s) to quantize with, or None when it never saw data),
`bit_length()` and `quant_axis()` (None: one scale for the whole tensor). A new rule is a
subclass of `BaseObserver` that implements `observe(array)` and `scales()`; pass an instance
as `QuantConfig(activation=..., weight=...)` and each quantized layer gets a copy.

>>> import runtime as rt
>>> obs = rt.quantization.AbsmaxObserver()
>>> _ = obs(rt.to_tensor([0.5, -2.0])); _ = obs(rt.to_tensor([1.0]))
>>> float(obs.scales())
2.0
"""
from __future__ import annotations

import numpy as np

from .. import nn
from ..tensor import Tensor


class BaseQuanter(nn.Layer):
    """What `convert` needs from any quantizer (fake quanter or observer)."""

    def __init__(self, quant_bits: int = 8):
        super().__init__()
        if not isinstance(quant_bits, int) or not 2 <= quant_bits <= 16:
            raise ValueError(f"{type(self).__name__}: quant_bits must be an int in [2, 16], "
                             f"got {quant_bits!r}")
        self.quant_bits = quant_bits

    def bit_length(self) -> int:
        return self.quant_bits

    def quant_axis(self):
        return None

    def scales(self):
        """The abs-max scale (a float32 Tensor: shape [1], or [C] per channel), or None if
        this quantizer has seen no data."""
        raise NotImplementedError


class BaseObserver(BaseQuanter):
    """An identity layer that records statistics of what flows through it (eagerly)."""

    def forward(self, x):
        self.observe(np.asarray(x.numpy(), dtype=np.float64))
        return x

    def observe(self, a: np.ndarray) -> None:
        raise NotImplementedError


def _scale_tensor(values) -> Tensor:
    return Tensor(np.asarray(values, np.float32).reshape(-1))


class AbsmaxObserver(BaseObserver):
    """The largest |x| over all calibration batches (Paddle's `AbsmaxObserver`)."""

    def __init__(self, quant_bits: int = 8):
        super().__init__(quant_bits)
        self._max = None

    def observe(self, a):
        if a.size:
            m = float(np.abs(a).max())
            self._max = m if self._max is None else max(self._max, m)

    def scales(self):
        return None if self._max is None else _scale_tensor(self._max)


class MovingAverageAbsmaxObserver(BaseObserver):
    """The moving average of each batch's max|x| with Paddle's bias correction: `state = rate
    * state + 1`, `accum = rate * accum + max|x|`, scale `accum / state` (as the QAT quanter
    `FakeQuanterMovingAverageAbsMax`, without touching the values)."""

    def __init__(self, quant_bits: int = 8, moving_rate: float = 0.9):
        super().__init__(quant_bits)
        if not 0.0 < moving_rate < 1.0:
            raise ValueError(f"MovingAverageAbsmaxObserver: moving_rate must be in (0, 1), got "
                             f"{moving_rate}")
        self.moving_rate = float(moving_rate)
        self._accum, self._state = 0.0, 0.0

    def observe(self, a):
        if a.size:
            self._state = self.moving_rate * self._state + 1.0
            self._accum = self.moving_rate * self._accum + float(np.abs(a).max())

    def scales(self):
        return None if self._state == 0 else _scale_tensor(self._accum / self._state)


class HistObserver(BaseObserver):
    """The `percent` quantile of |x| over all calibration batches, from a histogram of
    `bins_count` bins whose range grows as larger values arrive (old counts are re-binned), so
    a few outliers do not stretch the scale (PaddleSlim's `HistObserver`)."""

    def __init__(self, quant_bits: int = 8, bins_count: int = 2048, percent: float = 0.999):
        super().__init__(quant_bits)
        if not 0.0 < percent <= 1.0:
            raise ValueError(f"HistObserver: percent must be in (0, 1], got {percent}")
        if not isinstance(bins_count, int) or bins_count < 2:
            raise ValueError(f"HistObserver: bins_count must be an int >= 2, got {bins_count}")
        self.bins_count, self.percent = bins_count, float(percent)
        self._hist = None
        self._upper = 0.0

    def observe(self, a):
        v = np.abs(a).reshape(-1)
        if not v.size:
            return
        top = float(v.max())
        if self._hist is None:
            self._upper = top if top > 0 else 1e-8
            self._hist = np.zeros(self.bins_count, np.float64)
        elif top > self._upper:  # widen the range: move old counts to their new bins
            centers = (np.arange(self.bins_count) + 0.5) * (self._upper / self.bins_count)
            self._upper = top
            self._hist, _ = np.histogram(centers, self.bins_count, (0.0, top),
                                         weights=self._hist)
        counts, _ = np.histogram(v, self.bins_count, (0.0, self._upper))
        self._hist += counts

    def scales(self):
        if self._hist is None:
            return None
        cdf = np.cumsum(self._hist) / self._hist.sum()
        k = int(np.searchsorted(cdf, self.percent - 1e-12))
        return _scale_tensor((min(k, self.bins_count - 1) + 1) * self._upper / self.bins_count)


class AbsMaxChannelWiseWeightObserver(BaseObserver):
    """Per-channel abs-max of a weight along `quant_axis` (-1: the layer's output channels,
    axis 0 of a Conv2D weight, axis 1 of a Linear weight; Paddle's name)."""

    def __init__(self, quant_bits: int = 8, quant_axis: int = -1):
        super().__init__(quant_bits)
        self.axis = quant_axis
        self._max = None

    def quant_axis(self):
        return self.axis

    def observe(self, a):
        axis = self.axis % a.ndim
        m = np.abs(a).max(axis=tuple(i for i in range(a.ndim) if i != axis))
        self._max = m if self._max is None else np.maximum(self._max, m)

    def scales(self):
        return None if self._max is None else _scale_tensor(self._max)


__all__ = ["AbsMaxChannelWiseWeightObserver", "AbsmaxObserver", "BaseObserver", "BaseQuanter",
           "HistObserver", "MovingAverageAbsmaxObserver"]
