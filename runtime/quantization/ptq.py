"""Post-training quantization: `PTQ(config).quantize(model)` wraps the quantizable layers with
observers (identity layers that record statistics), the user runs a few calibration batches
through it, and `convert` (the same as QAT's) makes the int8 inference model.

>>> import numpy as np, runtime as rt
>>> Q = rt.quantization
>>> model = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 2))
>>> ptq = Q.PTQ(Q.QuantConfig(activation=Q.HistObserver(percent=0.999)))
>>> observed = ptq.quantize(model)
>>> for seed in range(3):                         # calibration batches
...     _ = observed(rt.to_tensor(np.random.default_rng(seed).normal(size=(16, 4)),
...                               dtype='float32'))
>>> infer = ptq.convert(observed)
>>> type(infer[0]).__name__, infer[0].weight.dtype.name
('Int8Linear', 'int8')
"""
from __future__ import annotations

import copy

from .. import nn
from .observers import AbsMaxChannelWiseWeightObserver, AbsmaxObserver, \
    MovingAverageAbsmaxObserver
from .qat import QAT, QuantConfig, convert


def _observer_config(config: QuantConfig) -> QuantConfig:
    """`config` with observers where it names fake-quant rules by string."""
    cfg = copy.copy(config)
    if cfg.activation is None:
        if cfg.activation_quantize_type == "moving_average_abs_max":
            cfg.activation = MovingAverageAbsmaxObserver(cfg.activation_bits, cfg.moving_rate)
        else:
            cfg.activation = AbsmaxObserver(cfg.activation_bits)
    if cfg.weight is None:
        cfg.weight = (AbsMaxChannelWiseWeightObserver(cfg.weight_bits)
                      if cfg.weight_quantize_type == "channel_wise_abs_max"
                      else AbsmaxObserver(cfg.weight_bits))
    return cfg


class PTQ:
    """Post-training quantization driver (Paddle's `paddle.quantization.PTQ`)."""

    def __init__(self, config: QuantConfig | None = None):
        self.config = _observer_config(config if config is not None else QuantConfig())

    def quantize(self, model: nn.Layer, inplace: bool = False) -> nn.Layer:
        """`model` (a copy unless `inplace`) in eval mode with observers on the inputs and
        weights of its quantizable layers; run calibration batches through it eagerly."""
        if not isinstance(model, nn.Layer):
            raise TypeError(f"PTQ.quantize: expected an rt.nn.Layer, got {type(model).__name__}")
        return QAT(self.config).quantize(model, inplace).eval()

    def convert(self, model: nn.Layer, inplace: bool = False) -> nn.Layer:
        """The int8 inference model; raises if an observer saw no calibration data."""
        return convert(model, inplace)


__all__ = ["PTQ"]
