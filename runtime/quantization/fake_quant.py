"""Fake quantization: round values to the b-bit integer grid and back, as ops.

Quantization-aware training runs the float model with every weight and activation replaced
by `dequantize(quantize(x))`: values snap to `k * scale / (2**(b-1) - 1)` for integers
`|k| <= 2**(b-1) - 1`, so training sees the rounding error an int8 deployment will have.
Rounding has zero gradient almost everywhere; the gradient rules are the straight-through
estimator (the incoming gradient passes to `x` unchanged), which is what lets QAT train.

Three scale rules (Paddle's names):

- `abs_max`: one scale, the largest |x| of this tensor.
- `channel_wise_abs_max`: one scale per slice along `quant_axis` (output channels of a conv
  weight, axis 0; columns of a Linear weight, axis 1).
- `moving_average_abs_max`: for activations; while training `state = rate * state + 1`,
  `accum = rate * accum + max|x|`, `scale = accum / state`; at inference the stored scale
  (`fake_quant_dequant` with a given scale).
"""
from __future__ import annotations

from ..dtypes import float32
from ..ops import infer as I
from ..ops.registry import Meta, OpError, bind, register


def _bin_count(bits: int) -> int:
    return (1 << (bits - 1)) - 1


def _round_half_away(xp, v):
    return xp.sign(v) * xp.floor(xp.abs(v) + 0.5)  # C's round(), as int8 kernels use


def _qdq(xp, x, scale, bits):
    """Quantize-dequantize `x` with `scale` (broadcastable), in x's dtype."""
    n = _bin_count(bits)
    work = xp.float64 if x.dtype == xp.float64 else xp.float32  # float16 rounds in float32
    s = scale.astype(work, copy=False)
    safe = xp.where(s > 0, s, 1.0).astype(work, copy=False)
    v = xp.clip(x.astype(work, copy=False), -safe, safe)
    out = _round_half_away(xp, v * (n / safe)) * (safe / n)
    return xp.where(s > 0, out, 0.0).astype(x.dtype, copy=False)


def _check_bits(op, bits):
    if not isinstance(bits, int) or not 2 <= bits <= 16:
        raise OpError(f"{op}: bit_length must be an int in [2, 16], got {bits!r}")


def _ste(ins, outs, gs, attrs):
    return [gs[0]] + [None] * (len(ins) - 1)


# ---- abs_max --------------------------------------------------------------------------------

def _abs_max_kernel(xp, x, bit_length=8):
    scale = xp.abs(x).max() if x.size else xp.zeros((), x.dtype)
    return _qdq(xp, x, scale, bit_length), xp.asarray(scale, xp.float32)


def _abs_max_infer(x, bit_length=8):
    I.check_tensor("fake_quant_dequant_abs_max", "x", x)
    _check_bits("fake_quant_dequant_abs_max", bit_length)
    return Meta(x.shape, x.dtype), Meta((), float32)


FAKE_QDQ_ABS_MAX = register(
    "fake_quant_dequant_abs_max", kernel=_abs_max_kernel, infer=_abs_max_infer, grad=_ste,
    amp="keep", doc="x on the b-bit grid of scale max|x|; returns (out, scale). STE gradient.")


def fake_quant_dequant_abs_max(x, bit_length: int = 8) -> tuple:
    """(x snapped to the `bit_length`-bit grid of scale max|x|, that scale).

    >>> import runtime as rt
    >>> out, scale = fake_quant_dequant_abs_max(rt.to_tensor([0.1, -1.27]))
    >>> [round(v, 4) for v in out.tolist()], float(scale)
    ([0.1, -1.27], 1.2699999809265137)
    """
    _check_bits("fake_quant_dequant_abs_max", bit_length)
    return bind(FAKE_QDQ_ABS_MAX, (x,), {"bit_length": bit_length})


# ---- channel_wise_abs_max -------------------------------------------------------------------

def _channel_kernel(xp, x, bit_length=8, quant_axis=0):
    axes = tuple(i for i in range(x.ndim) if i != quant_axis)
    scale = xp.abs(x).max(axis=axes, keepdims=True)
    return _qdq(xp, x, scale, bit_length), scale.reshape(-1).astype(xp.float32)


def _channel_infer(x, bit_length=8, quant_axis=0):
    op = "fake_channel_wise_quant_dequant_abs_max"
    I.check_tensor(op, "x", x)
    _check_bits(op, bit_length)
    if len(x.shape) == 0:
        raise OpError(f"{op}: x must have at least one dimension, got shape []")
    axis = I.norm_axis(op, quant_axis, len(x.shape), "quant_axis")
    return Meta(x.shape, x.dtype), Meta((x.shape[axis],), float32)


FAKE_QDQ_CHANNEL = register(
    "fake_channel_wise_quant_dequant_abs_max", kernel=_channel_kernel, infer=_channel_infer,
    grad=_ste, amp="keep",
    doc="x on a b-bit grid per slice along quant_axis; returns (out, scales). STE gradient.")


def fake_channel_wise_quant_dequant_abs_max(x, bit_length: int = 8,
                                            quant_axis: int = 0) -> tuple:
    """(x snapped per channel along `quant_axis`, the per-channel scales)."""
    _check_bits("fake_channel_wise_quant_dequant_abs_max", bit_length)
    axis = int(quant_axis) % max(len(x.shape), 1)
    return bind(FAKE_QDQ_CHANNEL, (x,), {"bit_length": bit_length, "quant_axis": axis})


# ---- moving_average_abs_max -----------------------------------------------------------------
# Two ops: the statistics update (no gradient) and the quantize-dequantize with a given scale
# (straight-through). Splitting them keeps the buffers that the layer overwrites after each
# step out of the recorded graph, so the in-place update cannot invalidate a gradient.

def _scale_kernel(xp, x, scale, accum, state, moving_rate=0.9):
    cur = xp.abs(x).max().astype(state.dtype) if x.size else xp.zeros((), state.dtype)
    state = moving_rate * state + 1.0
    accum = moving_rate * accum + cur
    return (accum / state).astype(scale.dtype, copy=False), accum, state


def _check_statistics(scale, accum, state):
    for name, m in (("scale", scale), ("accum", accum), ("state", state)):
        if any(d not in (1, -1) for d in m.shape):
            raise OpError(f"moving_average_abs_max_scale: {name} must hold one value, got "
                          f"shape {I.fmt(m.shape)}")


def _scale_infer(x, scale, accum, state, moving_rate=0.9):
    for name, m in (("x", x), ("scale", scale), ("accum", accum), ("state", state)):
        I.check_tensor("moving_average_abs_max_scale", name, m)
    _check_statistics(scale, accum, state)
    return (Meta(scale.shape, scale.dtype), Meta(accum.shape, accum.dtype),
            Meta(state.shape, state.dtype))


MOVING_SCALE = register(
    "moving_average_abs_max_scale", kernel=_scale_kernel, infer=_scale_infer, amp="keep",
    nondiff=True, doc="state = rate*state + 1; accum = rate*accum + max|x|; scale = "
                      "accum/state. Returns (scale, accum, state).")


def _qdq_kernel(xp, x, scale, bit_length=8):
    return _qdq(xp, x, scale, bit_length)


def _qdq_infer(x, scale, bit_length=8):
    I.check_tensor("fake_quant_dequant", "x", x)
    I.check_tensor("fake_quant_dequant", "scale", scale)
    if any(d not in (1, -1) for d in scale.shape):
        raise OpError(f"fake_quant_dequant: scale must hold one value, got shape "
                      f"{I.fmt(scale.shape)}")
    _check_bits("fake_quant_dequant", bit_length)
    return Meta(x.shape, x.dtype)


FAKE_QDQ = register(
    "fake_quant_dequant", kernel=_qdq_kernel, infer=_qdq_infer, grad=_ste, amp="keep",
    doc="x clipped to [-scale, scale] and snapped to the b-bit grid. STE gradient.")


def fake_quant_dequant(x, scale, bit_length: int = 8):
    """`x` clipped to +-scale and snapped to the `bit_length`-bit grid of that scale."""
    _check_bits("fake_quant_dequant", bit_length)
    return bind(FAKE_QDQ, (x, scale), {"bit_length": bit_length})


def moving_average_abs_max_scale(x, scale, accum, state, moving_rate: float = 0.9) -> tuple:
    """The updated (scale, accum, state) after seeing `x`."""
    _check_statistics(scale, accum, state)
    return bind(MOVING_SCALE, (x, scale, accum, state), {"moving_rate": float(moving_rate)})


def fake_quant_dequant_moving_average_abs_max(x, scale, accum, state, moving_rate: float = 0.9,
                                              bit_length: int = 8,
                                              is_test: bool = False) -> tuple:
    """(x snapped to the grid, new scale, new accum, new state); with `is_test` the given
    scale is used and the statistics are returned unchanged."""
    if not is_test:
        scale, accum, state = moving_average_abs_max_scale(x, scale, accum, state, moving_rate)
    return fake_quant_dequant(x, scale, bit_length), scale, accum, state


METHODS: dict = {}

__all__ = ["fake_channel_wise_quant_dequant_abs_max", "fake_quant_dequant",
           "fake_quant_dequant_abs_max", "fake_quant_dequant_moving_average_abs_max",
           "moving_average_abs_max_scale"]
