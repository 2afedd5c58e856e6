"""Elementwise math: arithmetic, unary math, assign, cast, scale, clip (matmul: `linalg.py`).

The pattern every op module follows: a kernel on arrays, an inference rule, a gradient rule
written with the public op functions (one line where possible), `register(...)`, then the
public function that normalises arguments and calls `bind`. `METHODS` lists the Tensor /
Variable methods and operators this module provides (installed by `runtime/methods.py`).
"""
from __future__ import annotations

import math as _math

import numpy as np

from .. import core, dtypes
from . import infer as I
from .elementwise import (  # noqa: F401  (sum_to_like and expand_as: public here too)
    EXPAND_AS, PY_SCALARS, SUM_TO_LIKE, binary, binary_fn, coerce, expand_as, float_in,
    is_float_array, named_after, reflected, sum_to_like, unary, unary_fn, unbroadcast)
from .inplace import write_into
from .logic import logical_and, where
from .registry import Meta, OpError, bind, register

def _true_divide(x, y):
    out = np.true_divide(x, y)
    if out.dtype == np.float64 and not (getattr(x, "dtype", None) == np.float64
                                         or getattr(y, "dtype", None) == np.float64):
        out = out.astype(np.float32)  # int / int is float32 in Paddle
    return out


def _pow_grad(ins, outs, gs, a):
    x, y = ins
    g = gs[0]
    gx = None if x.__class__ in PY_SCALARS else unbroadcast(g * y * pow(x, y - 1), x)
    if y.__class__ in PY_SCALARS:
        return [gx, None]
    log_x = _math.log(x) if x.__class__ in PY_SCALARS else log(x)
    return [gx, unbroadcast(g * outs[0] * log_x, y)]


def _extremum_grad(pick_x):
    """maximum/minimum: like Paddle, a tie sends the whole gradient to y."""
    def rule(ins, outs, gs, a):
        x, y = ins
        take_x = pick_x(x, y)
        gx = gs[0] * cast(take_x, gs[0].dtype)
        return [unbroadcast(gx, x), unbroadcast(gs[0] - gx, y)]
    return rule


ADD = binary("add", np.add, lambda ins, outs, gs, a: [
    unbroadcast(gs[0], ins[0]), unbroadcast(gs[0], ins[1])])
SUBTRACT = binary("subtract", np.subtract, lambda ins, outs, gs, a: [
    unbroadcast(gs[0], ins[0]), unbroadcast(-gs[0], ins[1])])
MULTIPLY = binary("multiply", np.multiply, lambda ins, outs, gs, a: [
    unbroadcast(gs[0] * ins[1], ins[0]), unbroadcast(gs[0] * ins[0], ins[1])])
DIVIDE = register(
    "divide", kernel=lambda xp, x, y: _true_divide(*coerce(x, y)),
    infer=I.binary("divide", float_only=True),
    grad=lambda ins, outs, gs, a: [
        unbroadcast(gs[0] / ins[1], ins[0]),
        unbroadcast(-gs[0] * outs[0] / ins[1], ins[1])])
FLOOR_DIVIDE = binary("floor_divide", np.floor_divide, None, nondiff=True,
                       doc="floor(x / y); no gradient (Paddle defines none).")
REMAINDER = binary("remainder", np.remainder, lambda ins, outs, gs, a: [
    unbroadcast(gs[0], ins[0]), unbroadcast(-gs[0] * floor_divide(ins[0], ins[1]), ins[1])],
    doc="x - floor(x / y) * y: the result has the sign of y, like Python's %.")
POW = binary("pow", np.power, _pow_grad)
MAXIMUM = binary("maximum", np.maximum, _extremum_grad(lambda x, y: x > y))
MINIMUM = binary("minimum", np.minimum, _extremum_grad(lambda x, y: x < y))


add = binary_fn(ADD, """x + y with broadcasting and Paddle's type promotion.

    >>> import runtime as rt
    >>> rt.add(rt.to_tensor([1, 2]), 0.5).tolist()
    [1.5, 2.5]
    """)
subtract = binary_fn(SUBTRACT, "x - y with broadcasting.")
multiply = binary_fn(MULTIPLY, "x * y with broadcasting.")
divide = binary_fn(DIVIDE, "x / y with broadcasting (integer inputs give float32).")
floor_divide = binary_fn(FLOOR_DIVIDE, "floor(x / y) with broadcasting (no gradient).")
remainder = binary_fn(REMAINDER, "x mod y with the sign of y (Python's %).")
mod = remainder
maximum = binary_fn(MAXIMUM, "Elementwise max; on ties the gradient goes to y (as Paddle).")
minimum = binary_fn(MINIMUM, "Elementwise min; on ties the gradient goes to y (as Paddle).")


def pow(x, y, name=None):
    """x ** y elementwise; y may be a tensor or a Python number.

    >>> import runtime as rt
    >>> rt.pow(rt.to_tensor([2.0, 3.0]), 2).tolist()
    [4.0, 9.0]
    """
    return bind(POW, (x, y), {})


# ---- unary math ---------------------------------------------------------------------------
# Float-only math on an integer tensor computes in float32 (Paddle's default float type).

def _zero_grad(ins, outs, gs, a):
    """Piecewise-constant ops (floor, sign, ...): the gradient is zero almost everywhere."""
    return [scale(gs[0], 0.0)]


_NUM = "iuf"  # the kinds that arithmetic accepts (bool is not a number here)

NEG = unary("neg", lambda xp, x: -x, lambda ins, outs, gs, a: [-gs[0]], float_only=False,
             allow=_NUM)
ABS = unary("abs", lambda xp, x: xp.abs(x), lambda ins, outs, gs, a: [gs[0] * sign(ins[0])],
             float_only=False, allow=_NUM)
SIGN = unary("sign", lambda xp, x: xp.sign(x), _zero_grad, float_only=False, allow=_NUM)
SQUARE = unary("square", lambda xp, x: x * x,
                lambda ins, outs, gs, a: [gs[0] * ins[0] * 2.0], float_only=False, allow=_NUM,
                amp="black")
EXP = unary("exp", lambda xp, x: xp.exp(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] * outs[0]], amp="black")
LOG = unary("log", lambda xp, x: xp.log(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] / ins[0]], amp="black")
LOG1P = unary("log1p", lambda xp, x: xp.log1p(float_in(x)),
               lambda ins, outs, gs, a: [gs[0] / (ins[0] + 1.0)], amp="black")
SQRT = unary("sqrt", lambda xp, x: xp.sqrt(float_in(x)),
              lambda ins, outs, gs, a: [gs[0] * 0.5 / outs[0]])
RSQRT = unary("rsqrt", lambda xp, x: 1.0 / xp.sqrt(float_in(x)),
               lambda ins, outs, gs, a: [gs[0] * outs[0] * outs[0] * outs[0] * -0.5])
SIN = unary("sin", lambda xp, x: xp.sin(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] * cos(ins[0])])
COS = unary("cos", lambda xp, x: xp.cos(float_in(x)),
             lambda ins, outs, gs, a: [-gs[0] * sin(ins[0])])
TANH = unary("tanh", lambda xp, x: xp.tanh(float_in(x)),
              lambda ins, outs, gs, a: [gs[0] * (1.0 - outs[0] * outs[0])])
FLOOR = unary("floor", lambda xp, x: xp.floor(float_in(x)), _zero_grad)
CEIL = unary("ceil", lambda xp, x: xp.ceil(float_in(x)), _zero_grad)
# Paddle rounds halves away from zero (C `round`), not to even like NumPy
ROUND = unary("round", lambda xp, x: (xp.sign(x) * xp.floor(xp.abs(x) + 0.5)).astype(
    float_in(x).dtype, copy=False), _zero_grad, doc="Round half away from zero.")
ASSIGN = register("assign", kernel=lambda xp, x: x.copy(), infer=I.same_as(0),
                  grad=lambda ins, outs, gs, a: [gs[0]], doc="A copy of x.")

# erf: Cephes' rational approximations (S. Moshier, public domain constants; relative error
# ~1e-16 in float64): x*T(x^2)/U(x^2) for |x| <= 1, 1 - exp(-x^2) P(|x|)/Q(|x|) above
# (erfc(8) < 1e-28, so larger |x| clip to 8 at no loss).
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)


def _polyval(coefs, x):
    acc = coefs[0] + 0 * x
    for c in coefs[1:]:
        acc = acc * x + c
    return acc


def _erf_above_one(xp, b):
    """erf(b) for 1 <= b <= 8 (Cephes: 1 - exp(-b^2) P(b)/Q(b))."""
    return 1.0 - xp.exp(-b * b) * _polyval(_ERFC_P, b) / _polyval(_ERFC_Q, b)


def _erf_kernel(xp, x):
    x = float_in(x)
    work = x if x.dtype.itemsize >= 4 else x.astype(np.float32)  # float16/bfloat16 compute wide
    a = xp.abs(work)
    s = xp.minimum(a, 1.0)
    z = s * s
    small = s * _polyval(_ERF_T, z) / _polyval(_ERF_U, z)
    if xp is np and small.__class__ is np.ndarray and small.ndim:
        # On the CPU the |x| > 1 formula (an exp and two polynomials of degree 8: most of the
        # work) runs on those elements only: the same operations on the same values, so the
        # same results as the `where` below. (On CuPy the `where` needs no host sync.)
        big = a > 1.0
        if big.any():
            b = xp.minimum(a[big], 8.0)
            small[big] = _erf_above_one(xp, b)
        return (xp.sign(work) * small).astype(x.dtype, copy=False)
    large = _erf_above_one(xp, xp.clip(a, 1.0, 8.0))
    return (xp.sign(work) * xp.where(a <= 1.0, small, large)).astype(x.dtype, copy=False)


ERF = unary("erf", _erf_kernel, lambda ins, outs, gs, a: [
    gs[0] * exp(-square(ins[0])) * 1.1283791670955126])  # 2 / sqrt(pi)


neg = unary_fn(NEG, "-x elementwise.")
abs = unary_fn(ABS, "|x| elementwise.")
sign = unary_fn(SIGN, "-1, 0 or 1 by the sign of x.")
square = unary_fn(SQUARE, "x * x elementwise.")
exp = unary_fn(EXP, "e ** x elementwise (integer inputs give float32).")
log = unary_fn(LOG, "Natural logarithm elementwise.")
log1p = unary_fn(LOG1P, "log(1 + x), accurate for small x.")
sqrt = unary_fn(SQRT, "Square root elementwise.")
rsqrt = unary_fn(RSQRT, "1 / sqrt(x) elementwise.")
sin = unary_fn(SIN, "Sine elementwise.")
cos = unary_fn(COS, "Cosine elementwise.")
tanh = unary_fn(TANH, """Hyperbolic tangent elementwise.

    >>> import runtime as rt
    >>> float(rt.tanh(rt.to_tensor(0.0)))
    0.0
    """)
floor = unary_fn(FLOOR, "Largest integer <= x, as a float tensor.")
ceil = unary_fn(CEIL, "Smallest integer >= x, as a float tensor.")
round = unary_fn(ROUND, "x rounded to the nearest integer, halves away from zero.")
erf = unary_fn(ERF, "The error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x.")


def assign(x, output=None):
    """A copy of `x` (a differentiable identity). With `output` (Paddle's semantics) the copy
    is written into `output`, which is returned: its values, shape and dtype become x's, in
    eager mode and in a program being built alike.

    >>> import runtime as rt
    >>> buf = rt.zeros([2])
    >>> _ = rt.assign(rt.to_tensor([1.0, 2.0]), buf)
    >>> buf.tolist()
    [1.0, 2.0]
    """
    if not hasattr(x, "dtype") or isinstance(x, np.ndarray):
        x = core.to_tensor(x)  # a list, NumPy array or Python number, as Paddle accepts
    out = bind(ASSIGN, (x,), {})
    if output is None:
        return out
    write_into(output, out)
    return output


# ---- cast and scale -------------------------------------------------------------------------

def _cast_infer(x, dtype):
    I.check_tensor("cast", "x", x)
    return Meta(x.shape, dtypes.convert_dtype(dtype))


CAST = register(
    "cast", kernel=lambda xp, x, dtype: x.astype(dtypes.convert_dtype(dtype).np, copy=False),
    infer=_cast_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [cast(gs[0], ins[0].dtype) if ins[0].dtype.is_floating
                                   else None],
    doc="x converted to `dtype` (float to int truncates toward zero, like Paddle).")


def cast(x, dtype):
    """`x` converted to `dtype` (any spelling: rt.float32, 'float32', np.float32).

    >>> import runtime as rt
    >>> rt.cast(rt.to_tensor([1.7, -1.7]), 'int32').tolist()
    [1, -1]
    """
    name = dtypes.convert_dtype(dtype).name
    if x.dtype == name:
        return x
    return bind(CAST, (x,), {"dtype": name})


def _scale_kernel(xp, x, scale=1.0, bias=0.0, bias_after_scale=True):
    out = x * scale + bias if bias_after_scale else (x + bias) * scale
    return out.astype(x.dtype, copy=False)


SCALE = register("scale", kernel=_scale_kernel, infer=I.unary("scale", allow=_NUM),
                 grad=lambda ins, outs, gs, a: [scale(gs[0], a.get("scale", 1.0))],
                 doc="scale * x + bias (or scale * (x + bias)), keeping x's dtype.")


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """`scale * x + bias` in x's dtype (Paddle's `scale` op).

    >>> import runtime as rt
    >>> rt.scale(rt.to_tensor([1.0, 2.0]), 2.0, 1.0).tolist()
    [3.0, 5.0]
    """
    if act is not None:
        raise ValueError(f"scale: act={act!r} is not supported; apply the activation after")
    if core.is_variable(scale) or core.is_variable(bias):  # (numbers the program computes)
        out = x * scale + bias if bias_after_scale else (x + bias) * scale
        return out if out.dtype == x.dtype else cast(out, x.dtype)
    attrs = {"scale": float(scale)}
    if bias:
        attrs["bias"] = float(bias)
        if not bias_after_scale:
            attrs["bias_after_scale"] = False
    return bind(SCALE, (x,), attrs)


def clip(x, min=None, max=None, name=None):
    """Limit values to [min, max] (either bound may be None).

    >>> import runtime as rt
    >>> rt.clip(rt.to_tensor([-2.0, 0.5, 3.0]), -1.0, 1.0).tolist()
    [-1.0, 0.5, 1.0]
    """
    if core.is_variable(min) or core.is_variable(max):
        return _clip_by_computed_bounds(x, min, max)
    attrs = {}
    if min is not None:
        attrs["min"] = float(min)
    if max is not None:
        attrs["max"] = float(max)
    return bind(CLIP, (x,), attrs)


def _clip_by_computed_bounds(x, lo, hi):
    """`clip` with a bound a program computes (a Variable: its value, which the op's
    attributes would hold, is known only when the program runs), from elementwise ops with
    `clip`'s values and gradient: to `x` strictly inside the bounds, none to the bounds."""
    bounds = []
    for b in (lo, hi):
        if core.is_tensor(b):
            if all(d >= 0 for d in b.shape) and _math.prod(b.shape) != 1:
                raise ValueError(f"clip: a tensor bound must hold one value, got shape "
                                 f"{list(b.shape)}")
            b = cast(b.detach(), x.dtype)
        bounds.append(b)
    lo, hi = bounds
    held = x.detach()
    limited = held if lo is None else maximum(held, lo)
    limited = limited if hi is None else minimum(limited, hi)
    inside = [c for c in (None if lo is None else x > lo, None if hi is None else x < hi)
              if c is not None]
    keep = inside[0] if len(inside) == 1 else logical_and(*inside)
    return where(keep, x, limited)


def _clip_kernel(xp, x, min=None, max=None):
    return xp.clip(x, min, max).astype(x.dtype, copy=False)


def _clip_grad(ins, outs, gs, a):
    x, lo, hi = ins[0], a.get("min"), a.get("max")
    if lo is None and hi is None:
        return [gs[0]]
    # Paddle passes the gradient only strictly inside the bounds
    keep = x > lo if hi is None else (x < hi if lo is None else logical_and(x > lo, x < hi))
    return [gs[0] * cast(keep, gs[0].dtype)]


CLIP = register("clip", kernel=_clip_kernel, infer=I.unary("clip", allow=_NUM),
                grad=_clip_grad)


METHODS = {
    "__add__": add, "__radd__": reflected(add), "add": add,
    "__sub__": subtract, "__rsub__": reflected(subtract), "subtract": subtract,
    "__mul__": multiply, "__rmul__": reflected(multiply), "multiply": multiply,
    "__truediv__": divide, "__rtruediv__": reflected(divide), "divide": divide,
    "__floordiv__": floor_divide, "__rfloordiv__": reflected(floor_divide), "floor_divide": floor_divide,
    "__mod__": remainder, "__rmod__": reflected(remainder), "remainder": remainder, "mod": remainder,
    "__pow__": pow, "__rpow__": reflected(pow), "pow": pow,
    "__neg__": neg, "neg": neg, "__abs__": abs, "abs": abs,
    "maximum": maximum, "minimum": minimum,
    "exp": exp, "log": log, "log1p": log1p, "sqrt": sqrt, "rsqrt": rsqrt, "square": square,
    "sign": sign, "sin": sin, "cos": cos, "tanh": tanh, "erf": erf, "floor": floor,
    "ceil": ceil, "round": round, "clip": clip, "scale": scale,
    "cast": cast, "astype": cast,
    "expand_as": expand_as,
}

__all__ = ["abs", "add", "assign", "cast", "ceil", "clip", "cos", "divide", "erf", "exp",
           "expand_as", "floor", "floor_divide", "log", "log1p", "maximum", "minimum",
           "mod", "multiply", "neg", "pow", "remainder", "round", "rsqrt", "scale", "sign", "sin",
           "sqrt", "square", "subtract", "sum_to_like", "tanh"]
