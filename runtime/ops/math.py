"""Elementwise math, matmul and friends.

The pattern every op module follows: a kernel on arrays, an inference rule, a gradient rule
written with the public op functions (one line where possible), `register(...)`, then the
public function that normalises arguments and calls `bind`. `METHODS` lists the Tensor /
Variable methods and operators this module provides (installed by `runtime/methods.py`).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import infer as I
from .registry import Meta, OpError, bind, register

_PY_SCALARS = (int, float, bool)


def coerce(x, y):
    """Apply Paddle's type promotion to two kernel operands (arrays or Python scalars)."""
    if x.__class__ in _PY_SCALARS:
        if x.__class__ is float and y.dtype.kind in "iub":
            y = y.astype(np.float32)
        return x, y
    if y.__class__ in _PY_SCALARS:
        if y.__class__ is float and x.dtype.kind in "iub":
            x = x.astype(np.float32)
        return x, y
    if x.dtype is not y.dtype and x.dtype != y.dtype:
        dt = dtypes.promote(dtypes.of_array(x), dtypes.of_array(y)).np
        x, y = x.astype(dt, copy=False), y.astype(dt, copy=False)
    return x, y


def _unbroadcast(g, x):
    """The gradient for input `x` of a broadcasting op: `g` summed back to x's shape."""
    if x.__class__ in _PY_SCALARS or x is None:
        return None
    return sum_to_like(g, x)


# ---- broadcasting helpers used by gradient rules -------------------------------------------

def _sum_to_like_kernel(xp, g, x):
    shape = x.shape
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1)
    out = g.sum(axis=axes, keepdims=True) if axes else g
    return out.reshape(shape) if lead else out


SUM_TO_LIKE = register(
    "sum_to_like", kernel=_sum_to_like_kernel,
    infer=lambda g, x: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [expand_as(gs[0], ins[0]), None],
    doc="Sum `g` over the axes along which `x` was broadcast (gradient of broadcasting).")


def sum_to_like(g, x):
    return bind(SUM_TO_LIKE, (g, x), {})


EXPAND_AS = register(
    "expand_as", kernel=lambda xp, x, y: xp.broadcast_to(x, y.shape),
    infer=lambda x, y: Meta(I.broadcast_shapes("expand_as", x.shape, y.shape), x.dtype),
    grad=lambda ins, outs, gs, a: [sum_to_like(gs[0], ins[0]), None],
    doc="Broadcast x to the shape of y.")


def expand_as(x, y, name=None):
    return bind(EXPAND_AS, (x, y), {})


# ---- binary arithmetic ----------------------------------------------------------------------

def _binary(name, fn, grad, **infer_kw):
    return register(name, kernel=lambda xp, x, y: fn(*coerce(x, y)),
                    infer=I.binary(name, **infer_kw), grad=grad)


ADD = _binary("add", np.add, lambda ins, outs, gs, a: [
    _unbroadcast(gs[0], ins[0]), _unbroadcast(gs[0], ins[1])])
SUBTRACT = _binary("subtract", np.subtract, lambda ins, outs, gs, a: [
    _unbroadcast(gs[0], ins[0]), _unbroadcast(-gs[0], ins[1])])
MULTIPLY = _binary("multiply", np.multiply, lambda ins, outs, gs, a: [
    _unbroadcast(gs[0] * ins[1], ins[0]), _unbroadcast(gs[0] * ins[0], ins[1])])
DIVIDE = register(
    "divide", kernel=lambda xp, x, y: _true_divide(*coerce(x, y)),
    infer=I.binary("divide", float_only=True),
    grad=lambda ins, outs, gs, a: [
        _unbroadcast(gs[0] / ins[1], ins[0]),
        _unbroadcast(-gs[0] * outs[0] / ins[1], ins[1])])


def _true_divide(x, y):
    out = np.true_divide(x, y)
    if out.dtype == np.float64 and not (getattr(x, "dtype", None) == np.float64
                                         or getattr(y, "dtype", None) == np.float64):
        out = out.astype(np.float32)  # int / int is float32 in Paddle
    return out


def add(x, y, name=None):
    return bind(ADD, (x, y), {})


def subtract(x, y, name=None):
    return bind(SUBTRACT, (x, y), {})


def multiply(x, y, name=None):
    return bind(MULTIPLY, (x, y), {})


def divide(x, y, name=None):
    return bind(DIVIDE, (x, y), {})


# ---- unary ----------------------------------------------------------------------------------

NEG = register("neg", kernel=lambda xp, x: -x, infer=I.unary("neg"),
               grad=lambda ins, outs, gs, a: [-gs[0]])
TANH = register("tanh", kernel=lambda xp, x: xp.tanh(x), infer=I.unary("tanh", float_only=True),
                grad=lambda ins, outs, gs, a: [gs[0] * (1.0 - outs[0] * outs[0])])
ASSIGN = register("assign", kernel=lambda xp, x: x.copy(), infer=I.same_as(0),
                  grad=lambda ins, outs, gs, a: [gs[0]], doc="A copy of x.")


def neg(x, name=None):
    return bind(NEG, (x,), {})


def tanh(x, name=None):
    return bind(TANH, (x,), {})


def assign(x, output=None):
    return bind(ASSIGN, (x,), {})


# ---- matmul ---------------------------------------------------------------------------------

def _matmul_kernel(xp, x, y, transpose_x=False, transpose_y=False):
    if transpose_x:
        x = xp.swapaxes(x, -1, -2) if x.ndim > 1 else x
    if transpose_y:
        y = xp.swapaxes(y, -1, -2) if y.ndim > 1 else y
    x, y = coerce(x, y)
    return xp.matmul(x, y)


def _matmul_infer(x, y, transpose_x=False, transpose_y=False):
    I.check_tensor("matmul", "x", x)
    I.check_tensor("matmul", "y", y)
    xs, ys = list(x.shape), list(y.shape)
    if not xs or not ys:
        raise OpError("matmul: x and y must have at least one dimension, got shapes "
                      f"{I.fmt(xs)} and {I.fmt(ys)}")
    if transpose_x and len(xs) > 1:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if transpose_y and len(ys) > 1:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    k1 = xs[-1]
    k2 = ys[-2] if len(ys) > 1 else ys[0]
    if k1 != k2 and k1 != -1 and k2 != -1:
        raise OpError(f"matmul: x has shape {I.fmt(x.shape)} but y has shape {I.fmt(y.shape)}; "
                      f"inner dimensions {k1} and {k2} differ")
    batch = I.broadcast_shapes("matmul", tuple(xs[:-2]), tuple(ys[:-2]))
    out = list(batch) + ([xs[-2]] if len(xs) > 1 else []) + ([ys[-1]] if len(ys) > 1 else [])
    return Meta(tuple(out), dtypes.promote(x.dtype, y.dtype))


def _matmul_grad(ins, outs, gs, a):
    x, y = ins
    g = gs[0]
    tx, ty = a.get("transpose_x", False), a.get("transpose_y", False)
    if x.ndim == 1 or y.ndim == 1:
        raise NotImplementedError("matmul gradient for 1-D operands")
    if not tx and not ty:
        gx, gy = matmul(g, y, transpose_y=True), matmul(x, g, transpose_x=True)
    elif tx and not ty:
        gx, gy = matmul(y, g, transpose_y=True), matmul(x, g)
    elif not tx and ty:
        gx, gy = matmul(g, y), matmul(g, x, transpose_x=True)
    else:
        gx, gy = matmul(y, g, True, True), matmul(g, x, True, True)
    return [sum_to_like(gx, x), sum_to_like(gy, y)]


MATMUL = register("matmul", kernel=_matmul_kernel, infer=_matmul_infer, grad=_matmul_grad,
                  amp="white")


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """Matrix product with NumPy broadcasting over batch dims.

    >>> import runtime as rt
    >>> rt.matmul(rt.ones([2, 3]), rt.ones([3, 4])).shape
    [2, 4]
    """
    attrs = {}
    if transpose_x:
        attrs["transpose_x"] = True
    if transpose_y:
        attrs["transpose_y"] = True
    return bind(MATMUL, (x, y), attrs)


def _r(fn):
    return lambda x, y: fn(y, x)


METHODS = {
    "__add__": add, "__radd__": _r(add), "add": add,
    "__sub__": subtract, "__rsub__": _r(subtract), "subtract": subtract,
    "__mul__": multiply, "__rmul__": _r(multiply), "multiply": multiply,
    "__truediv__": divide, "__rtruediv__": _r(divide), "divide": divide,
    "__neg__": neg, "neg": neg, "tanh": tanh,
    "__matmul__": matmul, "__rmatmul__": _r(matmul), "matmul": matmul,
    "expand_as": expand_as,
}

__all__ = ["add", "subtract", "multiply", "divide", "neg", "tanh", "assign", "matmul",
           "expand_as", "sum_to_like"]
