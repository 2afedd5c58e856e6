"""Neural-network and quantization ops -> ONNX (registered in `ops.TABLE`).

Quantization: `fake_quant_dequant` (an activation on its int8 grid, scale = abs-max) becomes
Clip + QuantizeLinear + DequantizeLinear with the ONNX scale abs-max / 127 and zero point 0;
`dequantize_linear` (an int8 weight of a converted model) becomes DequantizeLinear. The clip
keeps values in [-127, 127] as the runtime's symmetric grid does (ONNX would allow -128).
"""
from __future__ import annotations

import numpy as np

from .graph import ELEM, OpArgs
from .ops import converter


def _swap_last(a: OpArgs, i: int) -> str:
    r = a.rank(i)
    x = a.name(i)
    if r < 2:
        return x
    perm = list(range(r - 2)) + [r - 1, r - 2]
    return a.g.one("Transpose", [x], perm=perm)


@converter("matmul")
def _matmul(a):
    x = _swap_last(a, 0) if a.attrs.get("transpose_x") else a.tensor(0)
    y = _swap_last(a, 1) if a.attrs.get("transpose_y") else a.tensor(1)
    d = a.out_dtype()
    if a.dtype(0) is not d:
        x = a.g.one("Cast", [x], to=_elem(d))
    if a.dtype(1) is not d:
        y = a.g.one("Cast", [y], to=_elem(d))
    return a.g.one("MatMul", [x, y])


def _elem(d):
    return ELEM[d.name]


@converter("linear")
def _linear(a):
    out = a.g.one("MatMul", [a.name(0), a.name(1)])
    if a.ir(2) is not None:
        out = a.g.one("Add", [out, a.name(2)])
    return out


def _pads(a: OpArgs, padding):
    """ONNX `pads` / `auto_pad` from the runtime's [top, bottom, left, right] or a string."""
    if padding == "SAME":
        return {"auto_pad": "SAME_UPPER"}
    if padding == "VALID":
        return {"auto_pad": "VALID"}
    t, b, l, r = (int(p) for p in padding)
    return {"pads": [t, l, b, r]}


@converter("conv2d")
def _conv2d(a):
    attrs = dict(strides=[int(s) for s in a.attrs["stride"]],
                 dilations=[int(d) for d in a.attrs["dilation"]], group=int(a.attrs["groups"]),
                 **_pads(a, a.attrs["padding"]))
    ins = [a.name(0), a.name(1)] + ([a.name(2)] if a.ir(2) is not None else [])
    return a.g.one("Conv", ins, **attrs)


def _pool_attrs(a: OpArgs) -> dict:
    return dict(kernel_shape=[int(k) for k in a.attrs["kernel"]],
                strides=[int(s) for s in a.attrs["stride"]],
                ceil_mode=int(bool(a.attrs.get("ceil_mode", False))),
                **_pads(a, a.attrs["padding"]))


@converter("max_pool2d")
def _max_pool2d(a):
    out = a.g.one("MaxPool", [a.name(0)], **_pool_attrs(a))
    return [out, None]  # the argmax indices (for the gradient) are not exported


@converter("avg_pool2d")
def _avg_pool2d(a):
    attrs = _pool_attrs(a)
    attrs["count_include_pad"] = int(not a.attrs.get("exclusive", True))
    return a.g.one("AveragePool", [a.name(0)], **attrs)


@converter("resize2d")
def _resize2d(a):
    if a.attrs.get("kind") != "adaptive_avg":
        raise a.error(f"interpolation mode {a.attrs.get('kind')!r} is not mapped (only "
                      "adaptive average pooling is)")
    size = list(a.attrs.get("size") or ())
    if size == [1, 1]:
        return a.g.one("GlobalAveragePool", [a.name(0)])
    hw = a.shape(0)[2:]
    if len(size) == 2 and all(h > 0 and h % s == 0 for h, s in zip(hw, size)):
        k = [h // s for h, s in zip(hw, size)]
        return a.g.one("AveragePool", [a.name(0)], kernel_shape=k, strides=k)
    raise a.error(f"adaptive average pooling from {list(hw)} to {size}: ONNX expresses it only "
                  "when each output cell pools the same window (input divisible by output)")


@converter("batch_norm")
def _batch_norm(a):
    if a.attrs.get("training", False):
        raise a.error("batch statistics (training mode); export the model in eval mode")
    if not str(a.attrs.get("data_format", "NCHW")).startswith("NC") and a.rank(0) > 2:
        raise a.error(f"data_format {a.attrs['data_format']!r}: ONNX normalizes axis 1 only")
    g = a.g
    d = a.dtype(0)
    mean, var = a.name(1), a.name(2)
    c = a.shape(1)[0]
    w = a.name(3) if a.ir(3) is not None else g.const(np.ones(c), d.np)
    b = a.name(4) if a.ir(4) is not None else g.const(np.zeros(c), d.np)
    out = g.one("BatchNormalization", [a.name(0), w, b, mean, var],
                epsilon=float(a.attrs.get("epsilon", 1e-5)))
    return [out] + [None] * (len(a.op.outputs) - 1)


@converter("layer_norm")
def _layer_norm(a):
    g, d = a.g, a.dtype(0)
    rank = a.rank(0)
    begin = int(a.attrs.get("begin_norm_axis", -1))
    begin = begin + rank if begin < 0 else begin
    norm_shape = a.shape(0)[begin:]
    need = a.ir(1) is None or a.ir(2) is None
    if need and any(s < 0 for s in norm_shape):
        raise a.error("layer_norm without weight or bias over dims of unknown size")
    w = a.name(1) if a.ir(1) is not None else g.const(np.ones(norm_shape), d.np)
    b = a.name(2) if a.ir(2) is not None else g.const(np.zeros(norm_shape), d.np)
    if a.ir(1) is not None and a.rank(1) != len(norm_shape):
        w = g.one("Reshape", [w, g.ints(list(norm_shape))])
    if a.ir(2) is not None and a.rank(2) != len(norm_shape):
        b = g.one("Reshape", [b, g.ints(list(norm_shape))])
    return g.one("LayerNormalization", [a.name(0), w, b], axis=begin,
                 epsilon=float(a.attrs.get("epsilon", 1e-5)))


@converter("embedding")
def _embedding(a):
    g = a.g
    out = g.one("Gather", [a.name(1), a.name(0)], axis=0)
    pad = a.attrs.get("padding_idx")
    if pad is not None:
        keep = g.one("Not", [g.one("Equal", [a.name(0), g.const(pad, a.dtype(0).np)])])
        keep = g.one("Unsqueeze", [keep, g.ints([-1])])
        out = g.one("Where", [keep, out, g.const(0, a.out_dtype().np)])
    return out


@converter("dropout")
def _dropout(a):
    # the op exists only in training mode (eval-mode dropout builds no op or a scale)
    raise a.error("random dropout (training mode); export the model in eval mode "
                  "(layer.eval())")


@converter("assign")
def _assign(a):
    return a.g.one("Identity", [a.name(0)])


@converter("log1p")
def _log1p(a):
    d = a.out_dtype()
    return a.g.one("Log", [a.g.one("Add", [a.tensor(0, d), a.g.const(1, d.np)])])


@converter("isnan", "isinf")
def _isnan(a):
    x = a.name(0)
    if not a.dtype(0).is_floating:
        return a.g.one("Expand", [a.g.const(False, bool), a.g.one("Shape", [x])])
    return a.g.one("IsNaN" if a.op.type == "isnan" else "IsInf", [x])


@converter("expand_as")
def _expand_as(a):
    return a.g.one("Expand", [a.name(0), a.g.one("Shape", [a.name(1)])])


# ---- quantization ----------------------------------------------------------------------------

def _onnx_scale(a: OpArgs, i: int, bits: int) -> str:
    """ONNX scale (abs-max / (2**(bits-1) - 1)) from the runtime's abs-max input i."""
    if bits != 8:
        raise a.error(f"{bits}-bit quantization: ONNX QuantizeLinear/DequantizeLinear are "
                      "exported for 8 bits only")
    n = (1 << (bits - 1)) - 1
    s = a.g.one("Div", [a.tensor(i), a.g.const(n, a.dtype(i).np)])
    # a scale of 0 (an all-zero tensor) would divide by zero in QuantizeLinear
    return a.g.one("Max", [s, a.g.const(np.finfo(np.float32).tiny, a.dtype(i).np)])


@converter("fake_quant_dequant")
def _fake_qdq(a):
    g, bits = a.g, int(a.attrs.get("bit_length", 8))
    scale = g.one("Reshape", [a.tensor(1), g.ints([])])
    step = _onnx_scale(a, 1, bits)
    step = g.one("Reshape", [step, g.ints([])])
    x = g.one("Clip", [a.name(0), g.one("Neg", [scale]), scale])
    zero = g.const(0, np.int8)
    q = g.one("QuantizeLinear", [x, step, zero], hint="q")
    return g.one("DequantizeLinear", [q, step, zero], hint="dq")


@converter("dequantize_linear")
def _dequantize(a):
    g, bits = a.g, int(a.attrs.get("bit_length", 8))
    step = _onnx_scale(a, 1, bits)
    axis = a.attrs.get("quant_axis")
    n = 1 if axis is None else a.shape(0)[axis]
    zero = g.const(np.zeros(n if axis is not None else (), np.int8), np.int8)
    if axis is None:
        step = g.one("Reshape", [step, g.ints([])])
        return g.one("DequantizeLinear", [a.name(0), step, zero], hint="dq")
    return g.one("DequantizeLinear", [a.name(0), step, zero], hint="dq", axis=int(axis))


@converter("fake_quant_dequant_abs_max")
def _fake_qdq_abs_max(a):
    """Dynamic per-tensor quantization: the scale is this tensor's max |x|."""
    g, bits = a.g, int(a.attrs.get("bit_length", 8))
    if bits != 8:
        raise a.error(f"{bits}-bit quantization: exported for 8 bits only")
    x = a.name(0)
    scale = g.one("ReduceMax", [g.one("Abs", [x])], keepdims=0)
    step = g.one("Max", [g.one("Div", [scale, g.const(127, np.float32)]),
                         g.const(np.finfo(np.float32).tiny, np.float32)])
    zero = g.const(0, np.int8)
    q = g.one("QuantizeLinear", [x, step, zero], hint="q")
    out = g.one("DequantizeLinear", [q, step, zero], hint="dq")
    return [out, g.one("Cast", [scale], to=ELEM["float32"])]


# ONNX's LSTM orders the gate blocks i, o, f, c; the runtime's (Paddle's) are i, f, g, o
_ONNX_GATE_BLOCKS = (0, 3, 1, 2)


@converter("lstm_sequence")
def _lstm_sequence(a):
    """ONNX's LSTM over the projected inputs: W an identity that reorders the gate blocks
    (the projection and both biases are already in `xw`), R the recurrent weight's rows in
    ONNX's order; the cells and gates of every step (read only by the gradient) are not
    produced."""
    hidden = a.shape(1)[-1]
    if hidden < 0:
        raise a.error("the hidden size must be known")
    rows = np.concatenate([np.arange(b * hidden, (b + 1) * hidden) for b in _ONNX_GATE_BLOCKS])
    g = a.g
    np_dtype = a.dtype(0).np
    w = g.const(np.eye(4 * hidden, dtype=np_dtype)[rows][None], np_dtype)
    r = g.one("Unsqueeze", [g.one("Gather", [a.name(3), g.ints(rows)], axis=0), g.ints([0])])
    h0, c0 = (g.one("Unsqueeze", [a.name(i), g.ints([0])]) for i in (1, 2))
    y, _, y_c = g.node("LSTM", [a.name(0), w, r, "", "", h0, c0], 3, hidden_size=hidden,
                       direction="reverse" if a.attrs.get("reverse") else "forward")
    return [g.one("Squeeze", [y, g.ints([1])]), g.one("Squeeze", [y_c, g.ints([0])]), None, None]


# ONNX's GRU orders the gate blocks z, r, h; the runtime's (Paddle's) are r, z, c
_ONNX_GRU_BLOCKS = (1, 0, 2)


@converter("gru_sequence")
def _gru_sequence(a):
    """ONNX's GRU with `linear_before_reset` (the reset gate scales the hidden projection with
    its bias, as Paddle's and cuDNN's GRU) over the projected inputs: W an identity that
    reorders the gate blocks (the projection and `b_ih` are already in `xw`), R and the
    recurrent bias in ONNX's order, `sequence_lens` from `lengths` (ONNX's Y is zero past a
    row's length and Y_h its last valid state, as the op's); the saved gates and states (read
    only by the gradient) are not produced."""
    hidden = a.shape(1)[-1]
    if hidden < 0:
        raise a.error("the hidden size must be known")
    rows = np.concatenate([np.arange(b * hidden, (b + 1) * hidden) for b in _ONNX_GRU_BLOCKS])
    g = a.g
    np_dtype = a.dtype(0).np
    w = g.const(np.eye(3 * hidden, dtype=np_dtype)[rows][None], np_dtype)
    r = g.one("Unsqueeze", [g.one("Gather", [a.name(2), g.ints(rows)], axis=0), g.ints([0])])
    bias = ""
    if a.is_tensor(3):
        b_hh = g.one("Gather", [a.name(3), g.ints(rows)], axis=0)
        zeros = g.const(np.zeros(3 * hidden, np_dtype), np_dtype)
        bias = g.one("Unsqueeze", [g.one("Concat", [zeros, b_hh], axis=0), g.ints([0])])
    lengths = ""
    if a.is_tensor(4):  # within 0..T, as the op reads them
        steps = g.one("Gather", [g.one("Shape", [a.name(0)]), g.ints([0])], axis=0)
        within = g.one("Min", [g.one("Cast", [a.name(4)], to=ELEM["int64"]), steps])
        lengths = g.one("Cast", [g.one("Max", [within, g.const(0, np.int64)])],
                        to=ELEM["int32"])
    h0 = g.one("Unsqueeze", [a.name(1), g.ints([0])])
    y, y_h = g.node("GRU", [a.name(0), w, r, bias, lengths, h0], 2, hidden_size=hidden,
                    linear_before_reset=1,
                    direction="reverse" if a.attrs.get("reverse") else "forward")
    return [g.one("Squeeze", [y, g.ints([1])]), g.one("Squeeze", [y_h, g.ints([0])]), None, None]
