"""Quantization-aware training: `QuantConfig`, `QAT(config).quantize(model)` / `.convert()`.

`quantize` swaps each quantizable layer (Conv2D, Linear; not those with `skip_quant = True`)
for a wrapper that fake-quantizes its input activation and its weight before the same
computation. The wrapper holds the original Parameter objects under the original names, so a
float checkpoint loads into the quantized model, optimizers see the same parameters, and
`state_dict` only gains the activation scales. `convert` freezes a trained model for int8
inference: weights are stored on their integer grid (with their scales as buffers) and
activations use the scales learned in training (the layers of `int8.py`).
"""
from __future__ import annotations

import copy

import numpy as np

from .. import backend, nn
from ..autograd import no_grad
from ..nn import functional as F
from ..tensor import Tensor
from . import fake_quant as Q
from .int8 import Int8Conv2D, Int8Linear, quantize_to_int
from .observers import AbsMaxChannelWiseWeightObserver, BaseObserver, BaseQuanter

_WEIGHT_TYPES = ("abs_max", "channel_wise_abs_max")
_ACTIVATION_TYPES = ("abs_max", "moving_average_abs_max")


class QuantConfig:
    """What to quantize and how (Paddle's ImperativeQuantAware arguments).

    >>> import runtime as rt
    >>> cfg = rt.quantization.QuantConfig(weight_bits=8, activation_bits=8)
    >>> cfg.quantizable_layer_type
    ['Conv2D', 'Linear']
    """

    def __init__(self, weight_quantize_type: str = "channel_wise_abs_max",
                 activation_quantize_type: str = "moving_average_abs_max", weight_bits: int = 8,
                 activation_bits: int = 8, moving_rate: float = 0.9,
                 quantizable_layer_type=("Conv2D", "Linear"), *, activation=None,
                 weight=None):
        if weight_quantize_type not in _WEIGHT_TYPES:
            raise ValueError(f"QuantConfig: weight_quantize_type must be one of {_WEIGHT_TYPES}, "
                             f"got {weight_quantize_type!r}")
        if activation_quantize_type not in _ACTIVATION_TYPES:
            raise ValueError(f"QuantConfig: activation_quantize_type must be one of "
                             f"{_ACTIVATION_TYPES}, got {activation_quantize_type!r}")
        for name, bits in (("weight_bits", weight_bits), ("activation_bits", activation_bits)):
            if not isinstance(bits, int) or not 2 <= bits <= 16:
                raise ValueError(f"QuantConfig: {name} must be an int in [2, 16], got {bits!r}")
        if not 0.0 < moving_rate < 1.0:
            raise ValueError(f"QuantConfig: moving_rate must be in (0, 1), got {moving_rate}")
        types = [quantizable_layer_type] if isinstance(quantizable_layer_type, str) else \
            list(quantizable_layer_type)
        unknown = [t for t in types if t not in _QUANTED]
        if unknown:
            raise ValueError(f"QuantConfig: cannot quantize layer types {unknown}; supported: "
                             f"{sorted(_QUANTED)}")
        self.weight_quantize_type = weight_quantize_type
        self.activation_quantize_type = activation_quantize_type
        self.weight_bits, self.activation_bits = weight_bits, activation_bits
        self.moving_rate = float(moving_rate)
        self.quantizable_layer_type = types
        # pluggable quantizers (as Paddle's QuantConfig(activation=..., weight=...)): an
        # instance of an observer or quanter class, copied into every quantized layer
        for name, proto in (("activation", activation), ("weight", weight)):
            if proto is not None and not isinstance(proto, BaseQuanter):
                raise TypeError(f"QuantConfig: {name} must be an observer or quanter instance "
                                f"(a subclass of rt.quantization.BaseQuanter), got "
                                f"{type(proto).__name__}")
        self.activation, self.weight = activation, weight

    def __repr__(self):
        return (f"QuantConfig(weight={self.weight_quantize_type}/{self.weight_bits}, "
                f"activation={self.activation_quantize_type}/{self.activation_bits}, "
                f"layers={self.quantizable_layer_type})")


# ---- quanters: layers that fake-quantize one tensor ----------------------------------------

class _FakeQuanter(BaseQuanter):
    def __init__(self, bits: int = 8):
        super().__init__(bits)
        self.bits = bits

    def scales(self):
        return None


class FakeQuanterWithAbsMax(_FakeQuanter):
    """Per-tensor abs-max fake quantization (no state: the scale is this tensor's max)."""

    def forward(self, x):
        return Q.fake_quant_dequant_abs_max(x, self.bits)[0]


class FakeQuanterChannelWiseAbsMax(_FakeQuanter):
    """Per-channel abs-max fake quantization of a weight along `quant_axis`."""

    def __init__(self, bits: int = 8, quant_axis: int = 0):
        super().__init__(bits)
        self.axis = quant_axis

    def quant_axis(self):
        return self.axis

    def forward(self, x):
        return Q.fake_channel_wise_quant_dequant_abs_max(x, self.bits, self.axis)[0]


class FakeQuanterMovingAverageAbsMax(_FakeQuanter):
    """Activation fake quantization with a moving-average abs-max scale, learned while
    training (buffers `scale`, `accum`, `state`, initialised as Paddle does) and fixed in
    eval mode or once `frozen` (after `QAT.convert`)."""

    def __init__(self, bits: int = 8, moving_rate: float = 0.9):
        super().__init__(bits)
        self.moving_rate, self.frozen = moving_rate, False
        xp = backend.XP
        self.register_buffer("scale", Tensor(xp.full((1,), 0.001, xp.float32)))
        self.register_buffer("accum", Tensor(xp.ones((1,), xp.float32)))
        self.register_buffer("state", Tensor(xp.ones((1,), xp.float32)))

    def forward(self, x):
        is_test = self.frozen or not self.training
        out, scale, accum, state = Q.fake_quant_dequant_moving_average_abs_max(
            x, self.scale, self.accum, self.state, self.moving_rate, self.bits, is_test)
        if not is_test:
            self.scale.set_value(scale)
            self.accum.set_value(accum)
            self.state.set_value(state)
        return out

    def scales(self):
        """The learned scale, or None while the statistics are still at their initial values
        (the quanter never ran in training mode)."""
        if float(self.state.numpy().reshape(-1)[0]) == 1.0 and \
                float(self.accum.numpy().reshape(-1)[0]) == 1.0:
            return None
        return self.scale


class FakeQuanterWithAbsMaxObserver(FakeQuanterMovingAverageAbsMax):
    """Paddle's name and argument order for the moving-average abs-max activation quanter."""

    def __init__(self, moving_rate: float = 0.9, bit_length: int = 8, dtype: str = "float32",
                 name=None):
        if dtype != "float32":
            raise ValueError(f"FakeQuanterWithAbsMaxObserver: dtype must be 'float32', got "
                             f"{dtype!r}")
        super().__init__(bit_length, moving_rate)


def _weight_quanter(config: QuantConfig, quant_axis: int) -> nn.Layer:
    if config.weight is not None:
        q = copy.deepcopy(config.weight)
        if isinstance(q, AbsMaxChannelWiseWeightObserver) and q.axis == -1:
            q.axis = quant_axis  # -1: the layer's output channels
        return q
    if config.weight_quantize_type == "abs_max":
        return FakeQuanterWithAbsMax(config.weight_bits)
    return FakeQuanterChannelWiseAbsMax(config.weight_bits, quant_axis)


def _activation_quanter(config: QuantConfig) -> nn.Layer:
    if config.activation is not None:
        return copy.deepcopy(config.activation)
    if config.activation_quantize_type == "abs_max":
        return FakeQuanterWithAbsMax(config.activation_bits)
    return FakeQuanterMovingAverageAbsMax(config.activation_bits, config.moving_rate)


# ---- quantized layers -----------------------------------------------------------------------

class _Quanted(nn.Layer):
    """A quantizable layer with fake-quantized input and weight; owns the same Parameters."""

    quant_axis = 0

    def __init__(self, layer: nn.Layer, config: QuantConfig):
        super().__init__()
        # a plain attribute, not a sublayer: its parameters are registered here, by name
        object.__setattr__(self, "source", layer)
        self.weight = layer.weight
        self.bias = layer.bias
        self.weight_quanter = _weight_quanter(config, self.quant_axis)
        self.activation_quanter = _activation_quanter(config)

    def forward(self, x):
        weight = self.weight if self.weight_quanter is None else self.weight_quanter(self.weight)
        return self._compute(self.activation_quanter(x), weight)

    def extra_repr(self) -> str:
        return self.source.extra_repr()


class QuantedLinear(_Quanted):
    """`Linear` with fake-quantized input and weight (per-column scales: axis 1)."""

    quant_axis = 1

    def _compute(self, x, weight):
        return F.linear(x, weight, self.bias)


class QuantedConv2D(_Quanted):
    """`Conv2D` with fake-quantized input and weight (per-output-channel scales: axis 0)."""

    quant_axis = 0

    def _compute(self, x, weight):
        return self.source._forward_with(x, weight)


_QUANTED = {"Linear": QuantedLinear, "Conv2D": QuantedConv2D}


class QAT:
    """Quantization-aware training driver.

    >>> import runtime as rt
    >>> model = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 2))
    >>> qat = rt.quantization.QAT(rt.quantization.QuantConfig())
    >>> qmodel = qat.quantize(model)          # train qmodel as usual, then:
    >>> _ = qmodel(rt.ones([2, 4]))           # (one training-mode call, for the doctest)
    >>> infer_model = qat.convert(qmodel)
    >>> type(qmodel[0]).__name__, type(infer_model[0]).__name__
    ('QuantedLinear', 'Int8Linear')
    """

    def __init__(self, config: QuantConfig | None = None):
        self.config = config if config is not None else QuantConfig()

    def quantize(self, model: nn.Layer, inplace: bool = False) -> nn.Layer:
        """Return `model` (a copy unless `inplace`) with its quantizable layers wrapped."""
        if not isinstance(model, nn.Layer):
            raise TypeError(f"QAT.quantize: expected an rt.nn.Layer, got {type(model).__name__}")
        if not inplace:
            model = copy.deepcopy(model)
        if self._wrap(model) is not None:
            raise TypeError("QAT.quantize: the model itself is a single quantizable layer; "
                            "wrap it in a container (e.g. rt.nn.Sequential) first")
        return model

    def _wrap(self, layer: nn.Layer):
        """The quantized replacement of `layer`, or None after wrapping its children."""
        kind = type(layer).__name__
        if kind in self.config.quantizable_layer_type and not getattr(layer, "skip_quant",
                                                                       False):
            return _QUANTED[kind](layer, self.config)
        if isinstance(layer, _Quanted):
            return None
        for name, child in list(layer._sub_layers.items()):
            if child is None:
                continue
            replacement = self._wrap(child)
            if replacement is not None:
                layer._sub_layers[name] = replacement
        return None

    def convert(self, model: nn.Layer, inplace: bool = False) -> nn.Layer:
        """An int8 inference model (`rt.quantization.convert`): each quantized layer becomes
        an Int8Linear / Int8Conv2D with int8 weights, float32 scales and the learned
        activation scale. Raises if an activation scale was never learned."""
        return convert(model, inplace)


# ---- convert ---------------------------------------------------------------------------------

def _weight_scale(m, quanter) -> tuple:
    """(abs-max scales, quant axis or None) of a quantized layer's weight."""
    w = np.asarray(m.weight.numpy(), np.float32)
    channel = isinstance(quanter, FakeQuanterChannelWiseAbsMax) or (
        quanter is not None and quanter.quant_axis() is not None)
    axis = m.quant_axis if channel else None
    if isinstance(quanter, BaseObserver) and quanter.scales() is not None:
        s = quanter.scales().numpy()
    elif axis is None:
        s = np.abs(w).max(keepdims=True).reshape(1)
    else:
        s = np.abs(w).max(axis=tuple(i for i in range(w.ndim) if i != axis))
    return s, axis


def _activation_scale(name: str, m, quanter):
    """(scale or None for dynamic abs-max, bits); raises when the quantizer saw no data."""
    if isinstance(quanter, FakeQuanterWithAbsMax):
        return None, quanter.bits
    scale = quanter.scales()
    if scale is None:
        raise ValueError(
            f"convert: the activation quantizer of layer '{name}' ({type(m).__name__}, "
            f"{type(quanter).__name__}) has never seen data, so it has no scale. Run "
            "calibration batches through the model returned by PTQ.quantize (or train the "
            "QAT model) before convert")
    return scale.numpy(), quanter.bit_length()


def convert(model: nn.Layer, inplace: bool = False) -> nn.Layer:
    """Replace every quantized layer (from `QAT.quantize` or `PTQ.quantize`) by its int8
    inference layer; returns the model in eval mode."""
    if not inplace:
        model = copy.deepcopy(model)
    found = [(n, m) for n, m in model.named_sublayers(include_self=True)
             if isinstance(m, _Quanted)]
    if not found:
        raise ValueError("convert: the model has no quantized layers; call quantize() first")
    made = {}
    with no_grad():
        for name, m in found:
            ws, axis = _weight_scale(m, m.weight_quanter)
            a_scale, a_bits = _activation_scale(name or type(m).__name__, m,
                                                m.activation_quanter)
            bits = m.weight_quanter.bit_length() if m.weight_quanter is not None else 8
            q = quantize_to_int(np.asarray(m.weight.numpy()), ws, bits, axis)
            cls = Int8Conv2D if isinstance(m, QuantedConv2D) else Int8Linear
            made[id(m)] = cls(m.source, q, ws, bits, axis, a_scale, a_bits)
    for layer in model.sublayers(include_self=True):
        for key, child in list(layer._sub_layers.items()):
            if child is not None and id(child) in made:
                layer._sub_layers[key] = made[id(child)]
    return model.eval()


__all__ = ["QAT", "FakeQuanterChannelWiseAbsMax", "FakeQuanterMovingAverageAbsMax",
           "FakeQuanterWithAbsMax", "FakeQuanterWithAbsMaxObserver", "QuantConfig",
           "QuantedConv2D", "QuantedLinear", "convert"]
