"""`rt.quantization`: quantization-aware training with fake-quant ops (straight-through
gradients), per-channel weight scales and moving-average activation scales; post-training
quantization with pluggable observers; `convert` to int8 inference layers.

>>> import runtime as rt
>>> model = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 2))
>>> model[2].skip_quant = True            # keep the classifier in float
>>> qmodel = rt.quantization.QAT(rt.quantization.QuantConfig()).quantize(model)
>>> [type(m).__name__ for m in qmodel]
['QuantedLinear', 'ReLU', 'Linear']
"""
from .fake_quant import (
    fake_channel_wise_quant_dequant_abs_max,
    fake_quant_dequant_abs_max,
    fake_quant_dequant_moving_average_abs_max,
)
from .int8 import Int8Conv2D, Int8Linear, dequantize_linear
from .observers import (
    AbsMaxChannelWiseWeightObserver,
    AbsmaxObserver,
    BaseObserver,
    BaseQuanter,
    HistObserver,
    MovingAverageAbsmaxObserver,
)
from .ptq import PTQ
from .qat import (
    QAT,
    FakeQuanterChannelWiseAbsMax,
    FakeQuanterMovingAverageAbsMax,
    FakeQuanterWithAbsMax,
    FakeQuanterWithAbsMaxObserver,
    QuantConfig,
    QuantedConv2D,
    QuantedLinear,
    convert,
)

__all__ = ["PTQ", "QAT", "AbsMaxChannelWiseWeightObserver", "AbsmaxObserver", "BaseObserver",
           "BaseQuanter", "FakeQuanterChannelWiseAbsMax", "FakeQuanterMovingAverageAbsMax",
           "FakeQuanterWithAbsMax", "FakeQuanterWithAbsMaxObserver", "HistObserver", "Int8Conv2D", "Int8Linear",
           "MovingAverageAbsmaxObserver", "QuantConfig", "QuantedConv2D", "QuantedLinear",
           "convert", "dequantize_linear", "fake_channel_wise_quant_dequant_abs_max",
           "fake_quant_dequant_abs_max", "fake_quant_dequant_moving_average_abs_max"]
