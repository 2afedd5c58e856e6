"""Ops of the 'nn' family: activations, softmax, dropout and the fused linear layer.

Convolution and pooling live in `nn_conv.py`, normalization and embedding in `nn_norm.py`,
losses in `nn_loss.py`. `runtime.nn.functional` wraps all of them with Paddle's signatures;
the functions here take already-normalised arguments.

Piecewise-linear activations (relu, relu6, leaky_relu, hardtanh, hardsigmoid) share one
table: each has a forward kernel and a derivative that is constant between kinks, so the
gradient op `<name>_grad(g, x)` is linear in `g` and its own gradient is itself (with no
gradient for `x`). The smooth ones write their gradients with other ops, so higher-order
gradients come for free; GELU's is one op, `gelu_grad(x, dy)` (one fused loop in a program's
backward), whose own gradient is written with ops.
"""
from __future__ import annotations

import math

from ..core import is_variable
from ..dtypes import bool_
from . import infer as I
from . import linalg as L
from . import math as M
from . import random as _random
from . import reduce as R
from . import shape as S
from .registry import OPS, Meta, OpError, OpTypeError, bind, register


def check_float(op: str, arg: str, x) -> None:
    """Inputs of nn ops must be floating-point tensors."""
    I.check_tensor(op, arg, x)
    if not x.dtype.is_floating:
        raise OpTypeError(f"{op}: {arg} has dtype {x.dtype.name}; {op} needs a floating-point "
                          "tensor (cast it first)")


def float_unary(op: str):
    def rule(x, **_):
        check_float(op, "x", x)
        return Meta(x.shape, x.dtype)
    return rule


# ---- piecewise-linear activations -----------------------------------------------------------

# name: (forward(xp, x, **attrs), derivative(xp, x, **attrs)); at a kink the derivative is
# that of the flat side if there is one (relu'(0) = 0), else of the left side
_PIECEWISE = {
    "relu": (lambda xp, x: xp.maximum(x, x.dtype.type(0)),
             lambda xp, x: x > 0),
    "relu6": (lambda xp, x: xp.clip(x, x.dtype.type(0), x.dtype.type(6)),
              lambda xp, x: (x > 0) & (x < 6)),
    "leaky_relu": (lambda xp, x, negative_slope: xp.where(x > 0, x, x * negative_slope),
                   lambda xp, x, negative_slope: xp.where(
                       x > 0, x.dtype.type(1), x.dtype.type(negative_slope))),
    "hardtanh": (lambda xp, x, min, max: xp.clip(x, x.dtype.type(min), x.dtype.type(max)),
                 lambda xp, x, min, max: (x > min) & (x < max)),
    "hardsigmoid": (lambda xp, x, slope, offset: xp.clip(
                        x * x.dtype.type(slope) + x.dtype.type(offset), x.dtype.type(0),
                        x.dtype.type(1)),
                    lambda xp, x, slope, offset: xp.where(
                        (x * slope + offset > 0) & (x * slope + offset < 1),
                        x.dtype.type(slope), x.dtype.type(0))),
}


def _piecewise_grad_kernel(derivative):
    def kernel(xp, g, x, **a):
        d = derivative(xp, x, **a)
        if d.dtype == bool and g.dtype.kind == "f":  # a mask: cast inside the multiply
            return xp.multiply(g, d, dtype=g.dtype)
        return (g * d).astype(g.dtype, copy=False)
    return kernel


def _piecewise(name, forward, derivative):
    grad_op = register(
        f"{name}_grad",
        kernel=_piecewise_grad_kernel(derivative),
        infer=lambda g, x, **a: Meta(g.shape, g.dtype),
        grad=lambda ins, outs, gs, a: [bind(grad_op, (gs[0], ins[1]), a), None],
        doc=f"Gradient of {name}: g times the derivative of {name} at x.")
    op = register(
        name, kernel=forward, infer=float_unary(name),
        grad=lambda ins, outs, gs, a: [bind(grad_op, (gs[0], ins[0]), a)],
        doc=f"Elementwise {name}.")
    return op


RELU, RELU6, LEAKY_RELU, HARDTANH, HARDSIGMOID = (
    _piecewise(n, *fns) for n, fns in _PIECEWISE.items())


def relu(x, name=None):
    """max(x, 0).

    >>> import runtime as rt
    >>> rt.nn.functional.relu(rt.to_tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return bind(RELU, (x,), {})


def relu6(x, name=None):
    return bind(RELU6, (x,), {})


def leaky_relu(x, negative_slope: float = 0.01, name=None):
    if is_variable(negative_slope):  # (`float(t)` in converted code: known at run time)
        from .logic import where
        return where(x > 0, x, x * negative_slope)
    return bind(LEAKY_RELU, (x,), {"negative_slope": float(negative_slope)})


def hardtanh(x, min: float = -1.0, max: float = 1.0, name=None):
    if is_variable(min) or is_variable(max):  # (bounds the program computes)
        return M.clip(x, min, max)
    return bind(HARDTANH, (x,), {"min": float(min), "max": float(max)})


def hardsigmoid(x, slope: float = 0.1666667, offset: float = 0.5, name=None):
    """clip(slope * x + offset, 0, 1) (Paddle's defaults)."""
    if is_variable(slope) or is_variable(offset):  # (numbers the program computes)
        return M.clip(x * slope + offset, 0.0, 1.0)
    return bind(HARDSIGMOID, (x,), {"slope": float(slope), "offset": float(offset)})


# ---- smooth activations ---------------------------------------------------------------------

def _sigmoid_kernel(xp, x):
    # exp of -|x| never overflows; both branches are exact in their half of the line
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


SIGMOID = register(
    "sigmoid", kernel=_sigmoid_kernel, infer=float_unary("sigmoid"),
    grad=lambda ins, outs, gs, a: [gs[0] * outs[0] * (1.0 - outs[0])])


def sigmoid(x, name=None):
    return bind(SIGMOID, (x,), {})


def _silu_grad(ins, outs, gs, a):
    x = ins[0]
    s = sigmoid(x)
    return [gs[0] * (s * (1.0 + x * (1.0 - s)))]


SILU = register("silu", kernel=lambda xp, x: x * _sigmoid_kernel(xp, x),
                infer=float_unary("silu"), grad=_silu_grad)


def silu(x, name=None):
    return bind(SILU, (x,), {})


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _gelu_kernel(xp, x, approximate=False):
    if approximate:
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        return (0.5 * x * (1 + xp.tanh(inner))).astype(x.dtype, copy=False)
    erf = OPS["erf"].kernel(xp, x * x.dtype.type(_INV_SQRT_2))  # the math family's erf
    return (0.5 * x * (1 + erf)).astype(x.dtype, copy=False)


def _gelu_derivative(xp, x, approximate):
    """GELU's derivative at `x` as the `x.dtype` operations `_gelu_grad_kernel` multiplies
    by; the generated C (`native_math.py`) and GPU (`fusion_gpu.py`) code computes the same
    operations in the same order."""
    c = x.dtype.type
    if approximate:
        t = xp.tanh(c(_SQRT_2_OVER_PI) * (x + c(0.044715) * x * x * x))
        return c(0.5) * (c(1.0) + t) + c(0.5) * x * (c(1.0) - t * t) * c(_SQRT_2_OVER_PI) * (
            c(1.0) + c(3 * 0.044715) * x * x)
    cdf = c(0.5) * (c(1.0) + OPS["erf"].kernel(xp, x * c(_INV_SQRT_2)))
    return cdf + x * xp.exp(c(-0.5) * x * x) * c(_INV_SQRT_2PI)


def _gelu_grad_kernel(xp, x, dy, approximate=False):
    return (dy * _gelu_derivative(xp, x, approximate)).astype(x.dtype, copy=False)


def _gelu_second_derivative(x, approximate):
    """GELU'' at `x`, written with ops (the gradient of `gelu_grad` with respect to x)."""
    if approximate:  # u = c (x + k x^3), t = tanh(u): (1 - t^2) (u' - x t u'^2 + 3 c k x^2)
        k = 0.044715
        t = M.tanh(_SQRT_2_OVER_PI * (x + k * x * x * x))
        du = _SQRT_2_OVER_PI * (1.0 + 3 * k * x * x)
        return (1.0 - t * t) * (du - x * t * du * du + 3 * _SQRT_2_OVER_PI * k * x * x)
    return M.exp(-0.5 * x * x) * _INV_SQRT_2PI * (2.0 - x * x)  # phi(x) (2 - x^2)


def _gelu_grad_grad(ins, outs, gs, a):
    x, dy = ins
    approximate = a.get("approximate", False)
    return [gs[0] * dy * _gelu_second_derivative(x, approximate),
            gelu_grad(x, gs[0], approximate)]


def _gelu_grad_infer(x, dy, **_):
    check_float("gelu_grad", "x", x)
    return Meta(x.shape, x.dtype)


# dx from x and dy in one op, so that a program's backward reads nothing but x and fuses the
# derivative into one loop (`fusion.KERNEL_BINARY`; docs/performance.md)
GELU_GRAD = register("gelu_grad", kernel=_gelu_grad_kernel, infer=_gelu_grad_infer,
                     grad=_gelu_grad_grad)


def gelu_grad(x, dy, approximate: bool = False):
    """GELU's gradient: `dy` times GELU's derivative at `x` (exact, or the tanh form)."""
    return bind(GELU_GRAD, (x, dy), {"approximate": True} if approximate else {})


def _gelu_grad(ins, outs, gs, a):
    return [gelu_grad(ins[0], gs[0], a.get("approximate", False))]


GELU = register("gelu", kernel=_gelu_kernel, infer=float_unary("gelu"), grad=_gelu_grad)


def gelu(x, approximate: bool = False, name=None):
    return bind(GELU, (x,), {"approximate": True} if approximate else {})


def _softplus_kernel(xp, x, beta=1.0, threshold=20.0):
    bx = x * beta
    # logaddexp(0, bx) is log(1 + exp(bx)) without overflow; above the threshold it is bx
    soft = xp.logaddexp(x.dtype.type(0), bx) / beta
    return xp.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


SOFTPLUS = register(
    "softplus", kernel=_softplus_kernel, infer=float_unary("softplus"),
    # past the threshold the derivative is 1 and sigmoid(beta x) is 1 - exp(-20) or closer
    grad=lambda ins, outs, gs, a: [gs[0] * sigmoid(ins[0] * a.get("beta", 1.0))])


def softplus(x, beta: float = 1.0, threshold: float = 20.0, name=None):
    if is_variable(beta) or is_variable(threshold):  # (`float(t)` in converted code)
        from .logic import where
        bx = x * beta
        soft = (M.log1p(M.exp(-M.abs(bx))) + M.maximum(bx, 0.0)) / beta
        return where(bx > threshold, x, soft)
    return bind(SOFTPLUS, (x,), {"beta": float(beta), "threshold": float(threshold)})


# ---- softmax --------------------------------------------------------------------------------

def _softmax_infer(op):
    def rule(x, axis=-1):
        check_float(op, "x", x)
        I.norm_axis(op, axis, len(x.shape))
        return Meta(x.shape, x.dtype)
    return rule


# generated C kernels installed by runtime/program/softmax_native.py (ops may not import the
# program package); a kernel returns None where it does not apply
NATIVE_KERNELS: dict = {}


def _softmax_kernel(xp, x, axis=-1):
    native = NATIVE_KERNELS.get("softmax")
    out = None if native is None else native(xp, x, axis)
    if out is not None:
        return out
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax_kernel(xp, x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


SOFTMAX = register(
    "softmax", kernel=_softmax_kernel, infer=_softmax_infer("softmax"), amp="black",
    grad=lambda ins, outs, gs, a: [outs[0] * (gs[0] - R.sum(
        gs[0] * outs[0], axis=a.get("axis", -1), keepdim=True))])
LOG_SOFTMAX = register(
    "log_softmax", kernel=_log_softmax_kernel, infer=_softmax_infer("log_softmax"), amp="black",
    grad=lambda ins, outs, gs, a: [gs[0] - M.exp(outs[0]) * R.sum(
        gs[0], axis=a.get("axis", -1), keepdim=True)])


def softmax(x, axis: int = -1, name=None):
    """exp(x) / sum(exp(x)) along `axis`, computed without overflow."""
    return bind(SOFTMAX, (x,), {"axis": int(axis)})


def log_softmax(x, axis: int = -1, name=None):
    return bind(LOG_SOFTMAX, (x,), {"axis": int(axis)})


# ---- dropout --------------------------------------------------------------------------------

_DROPOUT_MODES = ("upscale_in_train", "downscale_in_infer")


def _dropout_scale(p: float, mode: str) -> float:
    if mode == "downscale_in_infer" or p >= 1.0:
        return 1.0
    return 1.0 / (1.0 - p)


def _mask_shape(shape, axis):
    return shape if axis is None else tuple(d if i in axis else 1 for i, d in enumerate(shape))


def _dropout_kernel(xp, x, p=0.5, axis=None, mode="upscale_in_train"):
    if not 0.0 <= p <= 1.0 or mode not in _DROPOUT_MODES:
        raise ValueError(p)  # `bind` reports the infer rule's error
    # drawn when the kernel runs (eager call or executor step), from the seeded generator
    keep = _random.uniform_array(xp, _mask_shape(x.shape, axis)) >= p
    return (x * keep * x.dtype.type(_dropout_scale(p, mode))).astype(x.dtype, copy=False), keep


def _dropout_infer(x, p=0.5, axis=None, mode="upscale_in_train"):
    check_float("dropout", "x", x)
    if not 0.0 <= p <= 1.0:
        raise OpError(f"dropout: p must be in [0, 1], got {p}")
    if mode not in _DROPOUT_MODES:
        raise OpError(f"dropout: mode must be 'upscale_in_train' or 'downscale_in_infer', "
                      f"got {mode!r}")
    if axis is not None:
        for a in axis:
            I.norm_axis("dropout", a, len(x.shape))
    return Meta(x.shape, x.dtype), Meta(_mask_shape(x.shape, axis), bool_)


DROPOUT_GRAD = register(
    "dropout_grad",
    kernel=lambda xp, g, keep, p=0.5, mode="upscale_in_train": (
        g * keep * g.dtype.type(_dropout_scale(p, mode))).astype(g.dtype, copy=False),
    infer=lambda g, keep, **a: Meta(g.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(DROPOUT_GRAD, (gs[0], ins[1]), a), None],
    doc="g times the saved dropout mask and scale (the gradient of dropout).")
DROPOUT = register(
    "dropout", kernel=_dropout_kernel, infer=_dropout_infer,
    grad=lambda ins, outs, gs, a: [bind(DROPOUT_GRAD, (gs[0], outs[1]), {
        k: v for k, v in a.items() if k != "axis"})],
    doc="Zero each element with probability p; returns (out, keep mask). The mask is an "
        "output so the gradient reuses it.", random=True)


def dropout(x, p: float = 0.5, axis=None, mode: str = "upscale_in_train"):
    """Training-mode dropout; returns (out, mask). See `runtime.nn.functional.dropout`."""
    attrs = {"p": float(p), "mode": mode}
    if axis is not None:
        attrs["axis"] = sorted(I.norm_axis("dropout", a, x.ndim)
                               for a in ((axis,) if isinstance(axis, int) else axis))
    return bind(DROPOUT, (x,), attrs)


# ---- linear ---------------------------------------------------------------------------------

def check_dtypes_match(x, w):
    """Raised inside kernels on mixed dtypes; `bind` then reports the infer rule's error."""
    if x.dtype != w.dtype:
        raise TypeError("mixed dtypes")


def _linear_kernel(xp, x, w, b=None):
    check_dtypes_match(x, w)
    out = L.matmul_rows(xp, x, w).astype(x.dtype, copy=False)  # bfloat16 comes back float32
    if b is not None:
        out += b
    return out


def _linear_infer(x, w, b=None):
    check_float("linear", "x", x)
    check_float("linear", "weight", w)
    if len(w.shape) != 2:
        raise OpError(f"linear: weight must be 2-D [in_features, out_features], got shape "
                      f"{I.fmt(w.shape)}")
    if not x.shape:
        raise OpError("linear: x must have at least one dimension, got a 0-d tensor")
    k, n = x.shape[-1], w.shape[0]
    if k != n and -1 not in (k, n):
        raise OpError(f"linear: x has shape {I.fmt(x.shape)} but weight has shape "
                      f"{I.fmt(w.shape)}; x's last dim {k} must equal in_features {n}")
    if b is not None and tuple(b.shape) not in ((w.shape[1],), (-1,)) and w.shape[1] != -1:
        raise OpError(f"linear: bias has shape {I.fmt(b.shape)} but weight has shape "
                      f"{I.fmt(w.shape)}; bias must be [{w.shape[1]}]")
    if x.dtype is not w.dtype:
        raise OpTypeError(f"linear: x has dtype {x.dtype.name} but weight has dtype "
                          f"{w.dtype.name}")
    return Meta(tuple(x.shape[:-1]) + (w.shape[1],), x.dtype)


def _linear_grad(ins, outs, gs, a):
    x, w, b = ins
    g = gs[0]
    gx = L.matmul(g, w, transpose_y=True)
    if x.ndim == 2:
        gw = L.matmul(x, g, transpose_x=True)
    else:  # fold the batch dims first: never materialise one [in, out] product per row
        gw = L.matmul(S.reshape(x, [-1, w.shape[0]]), S.reshape(g, [-1, w.shape[1]]),
                      transpose_x=True)
    return [gx, gw, None if b is None else M.sum_to_like(g, b)]


LINEAR = register("linear", kernel=_linear_kernel, infer=_linear_infer, grad=_linear_grad,
                  amp="white", doc="x @ weight + bias with weight laid out [in, out].")


def linear(x, weight, bias=None, name=None):
    return bind(LINEAR, (x, weight, bias), {})


METHODS: dict = {}

__all__: list = []
