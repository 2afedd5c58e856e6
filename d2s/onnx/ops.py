"""IR op -> ONNX nodes (opset 18), one converter per op type: `TABLE[type](args)` returns the
ONNX names of the op's outputs (None for an output that is not produced; reading it later is
an error naming the op). Semantics follow the runtime's kernels, e.g. Python-style
`floor_divide` / `remainder`, scalar operands taking the tensor's dtype, Paddle's padding
order [top, bottom, left, right]."""
from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from runtime import dtypes

from .graph import ELEM, OpArgs

TABLE: dict = {}


def converter(*names):
    def deco(fn):
        for n in names:
            TABLE[n] = fn
        return fn
    return deco


def _operand_dtype(a: OpArgs, i: int, j: int):
    """The dtype two operands are computed in (Paddle's promotion; a Python scalar takes the
    tensor's dtype, a float scalar with an integer tensor gives float32)."""
    di, dj = a.dtype(i), a.dtype(j)
    if di is not None and dj is not None:
        return di if di is dj else dtypes.promote(di, dj)
    d, lit = (di, a.ir(j)) if di is not None else (dj, a.ir(i))
    if isinstance(lit, float) and not d.is_floating:
        return dtypes.float32
    return d


# ---- elementwise -----------------------------------------------------------------------------

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "abs": "Abs", "floor": "Floor", "ceil": "Ceil", "sin": "Sin",
          "cos": "Cos", "erf": "Erf", "sign": "Sign", "reciprocal": "Reciprocal",
          "neg": "Neg", "negative": "Neg", "logical_not": "Not"}


def _unary(onnx_type):
    def conv(a: OpArgs):
        return a.g.one(onnx_type, [a.name(0)])
    return conv


for _k, _v in _UNARY.items():
    TABLE[_k] = _unary(_v)


@converter("relu6")
def _relu6(a):
    d = a.dtype(0).np
    return a.g.one("Clip", [a.name(0), a.g.const(0, d), a.g.const(6, d)])


@converter("square")
def _square(a):
    x = a.name(0)
    return a.g.one("Mul", [x, x])


@converter("rsqrt")
def _rsqrt(a):
    return a.g.one("Reciprocal", [a.g.one("Sqrt", [a.name(0)])])


@converter("silu", "swish")
def _silu(a):
    x = a.name(0)
    return a.g.one("Mul", [x, a.g.one("Sigmoid", [x])])


@converter("gelu")
def _gelu(a):
    g, x, d = a.g, a.name(0), a.dtype(0).np
    if a.attrs.get("approximate", False):
        inner = g.one("Mul", [g.const(math.sqrt(2 / math.pi), d), g.one("Add", [x, g.one(
            "Mul", [g.const(0.044715, d), g.one("Mul", [x, g.one("Mul", [x, x])])])])])
        t = g.one("Tanh", [inner])
    else:
        t = g.one("Erf", [g.one("Mul", [x, g.const(1 / math.sqrt(2), d)])])
    return g.one("Mul", [g.one("Mul", [x, g.const(0.5, d)]), g.one("Add", [t, g.const(1, d)])])


@converter("softplus")
def _softplus(a):
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold (the runtime's rule)."""
    g, x, d = a.g, a.name(0), a.dtype(0).np
    beta, threshold = float(a.attrs.get("beta", 1.0)), float(a.attrs.get("threshold", 20.0))
    bx = g.one("Mul", [x, g.const(beta, d)])
    soft = g.one("Div", [g.one("Softplus", [bx]), g.const(beta, d)])
    return g.one("Where", [g.one("Greater", [bx, g.const(threshold, d)]), x, soft])


@converter("hardtanh")
def _hardtanh(a):
    d = a.dtype(0).np
    return a.g.one("Clip", [a.name(0), a.g.const(a.attrs.get("min", -1.0), d),
                            a.g.const(a.attrs.get("max", 1.0), d)])


@converter("leaky_relu")
def _leaky_relu(a):
    return a.g.one("LeakyRelu", [a.name(0)], alpha=float(a.attrs.get("negative_slope", 0.01)))


_BINARY = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div",
           "maximum": "Max", "minimum": "Min", "pow": "Pow"}


def _binary(onnx_type):
    def conv(a: OpArgs):
        d = a.out_dtype()
        return a.g.one(onnx_type, [a.tensor(0, d), a.tensor(1, d)])
    return conv


for _k, _v in _BINARY.items():
    TABLE[_k] = _binary(_v)


@converter("floor_divide")
def _floor_divide(a):
    g, d = a.g, a.out_dtype()
    x, y = a.tensor(0, d), a.tensor(1, d)
    if d.is_floating:
        return g.one("Floor", [g.one("Div", [x, y])])
    # exact for integers: (x - mod(x, y)) / y with Python's sign rule for mod
    return g.one("Div", [g.one("Sub", [x, g.one("Mod", [x, y], fmod=0)]), y])


@converter("remainder", "mod")
def _remainder(a):
    g, d = a.g, a.out_dtype()
    x, y = a.tensor(0, d), a.tensor(1, d)
    if d.is_floating:
        return g.one("Sub", [x, g.one("Mul", [y, g.one("Floor", [g.one("Div", [x, y])])])])
    return g.one("Mod", [x, y], fmod=0)


_COMPARE = {"equal": "Equal", "greater_than": "Greater", "less_than": "Less",
            "greater_equal": "GreaterOrEqual", "less_equal": "LessOrEqual"}


def _compare(onnx_type, negate=False):
    def conv(a: OpArgs):
        d = _operand_dtype(a, 0, 1)
        out = a.g.one(onnx_type, [a.tensor(0, d), a.tensor(1, d)])
        return a.g.one("Not", [out]) if negate else out
    return conv


for _k, _v in _COMPARE.items():
    TABLE[_k] = _compare(_v)
TABLE["not_equal"] = _compare("Equal", negate=True)


def _logical(bool_type, int_type):
    def conv(a: OpArgs):
        d = a.out_dtype()
        op = bool_type if d.name == "bool" else int_type
        if op is None:
            raise a.error(f"ONNX has no {a.op.type} on {d.name}")
        return a.g.one(op, [a.tensor(0, d), a.tensor(1, d)])
    return conv


TABLE["logical_and"] = _logical("And", None)
TABLE["logical_or"] = _logical("Or", None)
TABLE["logical_xor"] = _logical("Xor", None)
TABLE["bitwise_and"] = _logical("And", "BitwiseAnd")
TABLE["bitwise_or"] = _logical("Or", "BitwiseOr")
TABLE["bitwise_xor"] = _logical("Xor", "BitwiseXor")


@converter("where")
def _where(a):
    d = a.out_dtype()
    return a.g.one("Where", [a.tensor(0), a.tensor(1, d), a.tensor(2, d)])


@converter("cast")
def _cast(a):
    return a.g.one("Cast", [a.name(0)], to=ELEM[a.out_dtype().name])


@converter("scale")
def _scale(a):
    g, d = a.g, a.out_dtype()
    s, b = a.attrs.get("scale", 1.0), a.attrs.get("bias", 0.0)
    x = a.tensor(0, d)
    if a.attrs.get("bias_after_scale", True):
        return g.one("Add", [g.one("Mul", [x, g.const(s, d.np)]), g.const(b, d.np)])
    return g.one("Mul", [g.one("Add", [x, g.const(b, d.np)]), g.const(s, d.np)])


@converter("clip")
def _clip(a):
    d = a.dtype(0)
    lo, hi = a.attrs.get("min"), a.attrs.get("max")
    return a.g.one("Clip", [a.name(0), "" if lo is None else a.g.const(lo, d.np),
                            "" if hi is None else a.g.const(hi, d.np)])


# ---- reductions ------------------------------------------------------------------------------

def _axes_input(a: OpArgs, axis):
    if axis is None:
        return []
    return [a.g.ints(axis if isinstance(axis, (list, tuple)) else [axis])]


def _reduce(onnx_type):
    def conv(a: OpArgs):
        d = a.out_dtype()
        x = a.tensor(0, d)
        return a.g.one(onnx_type, [x] + _axes_input(a, a.attrs.get("axis")),
                       keepdims=int(bool(a.attrs.get("keepdim", False))))
    return conv


TABLE["sum"] = _reduce("ReduceSum")
TABLE["mean"] = _reduce("ReduceMean")
TABLE["max"] = _reduce("ReduceMax")
TABLE["min"] = _reduce("ReduceMin")
TABLE["prod"] = _reduce("ReduceProd")


def _bool_reduce(onnx_type):
    def conv(a: OpArgs):
        g = a.g
        x = g.one("Cast", [a.name(0)], to=TensorProto.INT32)
        r = g.one(onnx_type, [x] + _axes_input(a, a.attrs.get("axis")),
                  keepdims=int(bool(a.attrs.get("keepdim", False))))
        return g.one("Cast", [r], to=TensorProto.BOOL)
    return conv


TABLE["all"] = _bool_reduce("ReduceMin")
TABLE["any"] = _bool_reduce("ReduceMax")


def _arg(onnx_type):
    def conv(a: OpArgs):
        g, axis, keep = a.g, a.attrs.get("axis"), bool(a.attrs.get("keepdim", False))
        x = a.name(0)
        if axis is None:
            flat = g.one("Reshape", [x, g.ints([-1])])
            out = g.one(onnx_type, [flat], axis=0, keepdims=0)
            if keep:
                out = g.one("Reshape", [out, g.ints([1] * a.rank(0))])
        else:
            out = g.one(onnx_type, [x], axis=int(axis[0]), keepdims=int(keep))
        d = a.out_dtype()
        return out if d.name == "int64" else g.one("Cast", [out], to=ELEM[d.name])
    return conv


TABLE["argmax"] = _arg("ArgMax")
TABLE["argmin"] = _arg("ArgMin")


@converter("cumsum")
def _cumsum(a):
    d = a.out_dtype()
    x = a.tensor(0, d)
    if a.rank(0) == 0:
        return a.g.one("Identity", [x])
    return a.g.one("CumSum", [x, a.g.const(int(a.attrs["axis"]), np.int64)])


@converter("softmax", "log_softmax")
def _softmax(a):
    return a.g.one("Softmax" if a.op.type == "softmax" else "LogSoftmax", [a.name(0)],
                   axis=int(a.attrs.get("axis", -1)))


@converter("topk")
def _topk(a):
    k = a.attrs["k"] if "k" in a.attrs else a.ir(1)
    if not isinstance(k, int):
        raise a.error("k must be a Python int")
    vals, idx = a.g.node("TopK", [a.name(0), a.g.ints([k])], 2, axis=int(a.attrs.get(
        "axis", -1)), largest=int(bool(a.attrs.get("largest", True))), sorted=1)
    d = a.out_dtype(1)
    return [vals, idx if d.name == "int64" else a.g.one("Cast", [idx], to=ELEM[d.name])]
