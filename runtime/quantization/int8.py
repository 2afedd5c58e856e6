"""int8 inference layers: what `convert` (`qat.py`) turns the layers of a quantized model
(QAT-trained, or PTQ-calibrated) into, holding int8 weights with float32 abs-max scales.

An `Int8Linear` / `Int8Conv2D` stores its weight as an int8 buffer `weight` (the integer
grid values `k`, |k| <= 127) and `weight_scale` (abs-max per output channel); its forward
dequantizes the weight (`dequantize_linear`: `k * scale / 127`), snaps the input activation to
the grid of the calibrated `activation_scale`, and runs the float layer. The values are the
fake-quant model's, so outputs agree with it to float rounding; `d2s.save` writes the int8
buffer as int8 (4x smaller than float32), and the ONNX export maps the two steps to
DequantizeLinear and QuantizeLinear/DequantizeLinear.
"""
from __future__ import annotations

import numpy as np

from .. import backend, nn
from ..dtypes import float32
from ..nn import functional as F
from ..ops import infer as I
from ..ops.registry import Meta, OpError, OpTypeError, bind, register
from ..tensor import Tensor
from . import fake_quant as Q


# ---- the op ----------------------------------------------------------------------------------

def _step(xp, scale, bits, ndim, axis):
    """abs-max scale -> the grid step scale / (2**(bits-1) - 1), shaped to broadcast."""
    n = (1 << (bits - 1)) - 1
    s = scale.astype(xp.float32, copy=False)
    safe = xp.where(s > 0, s, 1.0).astype(xp.float32, copy=False)
    step = xp.where(s > 0, safe / n, 0.0).astype(xp.float32, copy=False)
    if axis is None:
        return step.reshape(())
    shape = [1] * ndim
    shape[axis] = -1
    return step.reshape(shape)


def _dequantize_kernel(xp, x, scale, bit_length=8, quant_axis=None):
    if x.dtype.kind not in "iu":
        raise TypeError("x must hold integers")  # `bind` reports the infer rule's message
    return x.astype(xp.float32) * _step(xp, scale, bit_length, x.ndim, quant_axis)


def _dequantize_infer(x, scale, bit_length=8, quant_axis=None):
    op = "dequantize_linear"
    I.check_tensor(op, "x", x)
    I.check_tensor(op, "scale", scale)
    if not x.dtype.is_integer:
        raise OpTypeError(f"{op}: x must hold integers (int8 grid values), got {x.dtype.name}")
    Q._check_bits(op, bit_length)
    if quant_axis is None:
        if any(d not in (1, -1) for d in scale.shape):
            raise OpError(f"{op}: a per-tensor scale must hold one value, got shape "
                          f"{I.fmt(scale.shape)}")
    else:
        axis = I.norm_axis(op, quant_axis, len(x.shape), "quant_axis")
        if len(scale.shape) != 1 or -1 not in (scale.shape[0], x.shape[axis]) and \
                scale.shape[0] != x.shape[axis]:
            raise OpError(f"{op}: scale must have one value per slice along axis {axis} "
                          f"({x.shape[axis]}), got shape {I.fmt(scale.shape)}")
    return Meta(x.shape, float32)


DEQUANTIZE_LINEAR = register(
    "dequantize_linear", kernel=_dequantize_kernel, infer=_dequantize_infer, nondiff=True,
    amp="keep", doc="int grid values -> float32: x * scale / (2**(bits-1) - 1), per tensor or "
                    "per slice along quant_axis (scale = abs-max).")


def dequantize_linear(x, scale, bit_length: int = 8, quant_axis=None):
    """float32 values of integer grid values `x`: `x * scale / (2**(bit_length-1) - 1)`.

    >>> import numpy as np, runtime as rt
    >>> q = rt.to_tensor(np.array([127, -64], np.int8))
    >>> dequantize_linear(q, rt.to_tensor([2.0])).tolist()
    [2.0, -1.0078740119934082]
    """
    if quant_axis is not None:
        quant_axis = int(quant_axis) % max(len(x.shape), 1)
    return bind(DEQUANTIZE_LINEAR, (x, scale), {"bit_length": bit_length,
                                                "quant_axis": quant_axis})


def quantize_to_int(w: np.ndarray, scale: np.ndarray, bits: int, axis) -> np.ndarray:
    """The integer grid values of `w` (round half away from zero, as the fake-quant ops)."""
    n = (1 << (bits - 1)) - 1
    s = scale.astype(np.float32)
    if axis is not None:
        shape = [1] * w.ndim
        shape[axis] = -1
        s = s.reshape(shape)
    safe = np.where(s > 0, s, 1.0).astype(np.float32)
    v = np.clip(w.astype(np.float32), -safe, safe) * (n / safe)
    k = np.sign(v) * np.floor(np.abs(v) + 0.5)
    k = np.where(s > 0, k, 0)
    return k.astype(np.int8 if bits <= 8 else np.int16)


# ---- int8 layers -----------------------------------------------------------------------------

class _Int8(nn.Layer):
    """A Linear / Conv2D for inference with an int8 weight and float32 scales."""

    def __init__(self, source: nn.Layer, qweight: np.ndarray, weight_scale: np.ndarray,
                 weight_bits: int, quant_axis, activation_scale, activation_bits: int):
        super().__init__()
        object.__setattr__(self, "source", source)  # its geometry (stride, padding, ...)
        self.weight_bits, self.activation_bits = weight_bits, activation_bits
        self.quant_axis = quant_axis
        self.register_buffer("weight", Tensor(backend.XP.asarray(qweight)))
        self.register_buffer("weight_scale", Tensor(backend.XP.asarray(
            weight_scale.astype(np.float32).reshape(-1))))
        self.bias = source.bias
        if activation_scale is None:  # per-tensor abs-max of each input (dynamic)
            self.activation_scale = None
        else:
            self.register_buffer("activation_scale", Tensor(backend.XP.asarray(
                np.asarray(activation_scale, np.float32).reshape(-1))))

    def dequantized_weight(self):
        """The float32 weight the int8 values stand for."""
        return dequantize_linear(self.weight, self.weight_scale, self.weight_bits,
                                 self.quant_axis)

    def forward(self, x):
        w = self.dequantized_weight()
        if self.activation_scale is None:
            x = Q.fake_quant_dequant_abs_max(x, self.activation_bits)[0]
        else:
            x = Q.fake_quant_dequant(x, self.activation_scale, self.activation_bits)
        return self._compute(x, w)

    def extra_repr(self) -> str:
        return f"{self.source.extra_repr()}, int{self.weight_bits} weight"


class Int8Linear(_Int8):
    """`Linear` with an int8 weight (per-column scales, axis 1) for inference."""

    def _compute(self, x, w):
        return F.linear(x, w, self.bias)


class Int8Conv2D(_Int8):
    """`Conv2D` with an int8 weight (per-output-channel scales, axis 0) for inference."""

    def _compute(self, x, w):
        return self.source._forward_with(x, w)


__all__ = ["Int8Conv2D", "Int8Linear", "dequantize_linear", "quantize_to_int"]
