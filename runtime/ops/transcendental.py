"""More elementwise math Paddle scripts call (geometry, rotations, distributions): `tan`,
the inverse and hyperbolic trigonometric functions, `expm1`, `trunc` / `frac`, `atan2`,
`logaddexp`, and `logit`, `deg2rad` / `rad2deg`, `hypot` composed of other ops. Float-only
math on an integer tensor computes in float32, as in `math.py`."""
from __future__ import annotations

import numpy as np

from .elementwise import binary, binary_fn, float_in, unary, unary_fn, unbroadcast
from .logic import where
from .math import _NUM, _zero_grad, clip, exp, log, scale, sqrt

_ONE = 1.0


def _trunc_kernel(xp, x):
    return x.copy() if x.dtype.kind in "iu" else xp.trunc(x)


TAN = unary("tan", lambda xp, x: xp.tan(float_in(x)),
            lambda ins, outs, gs, a: [gs[0] * (outs[0] * outs[0] + _ONE)])
ASIN = unary("asin", lambda xp, x: xp.arcsin(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] / sqrt(_ONE - ins[0] * ins[0])])
ACOS = unary("acos", lambda xp, x: xp.arccos(float_in(x)),
             lambda ins, outs, gs, a: [-gs[0] / sqrt(_ONE - ins[0] * ins[0])])
ATAN = unary("atan", lambda xp, x: xp.arctan(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] / (ins[0] * ins[0] + _ONE)])
SINH = unary("sinh", lambda xp, x: xp.sinh(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] * cosh(ins[0])])
COSH = unary("cosh", lambda xp, x: xp.cosh(float_in(x)),
             lambda ins, outs, gs, a: [gs[0] * sinh(ins[0])])
ASINH = unary("asinh", lambda xp, x: xp.arcsinh(float_in(x)),
              lambda ins, outs, gs, a: [gs[0] / sqrt(ins[0] * ins[0] + _ONE)])
ACOSH = unary("acosh", lambda xp, x: xp.arccosh(float_in(x)),
              lambda ins, outs, gs, a: [gs[0] / sqrt(ins[0] * ins[0] - _ONE)])
ATANH = unary("atanh", lambda xp, x: xp.arctanh(float_in(x)),
              lambda ins, outs, gs, a: [gs[0] / (_ONE - ins[0] * ins[0])])
EXPM1 = unary("expm1", lambda xp, x: xp.expm1(float_in(x)),
              lambda ins, outs, gs, a: [gs[0] * (outs[0] + _ONE)], amp="black")
TRUNC = unary("trunc", _trunc_kernel, _zero_grad, float_only=False, allow=_NUM,
              doc="x rounded towards zero (integer tensors come back as they are).")


def _atan2_grad(ins, outs, gs, a):
    x, y = ins
    r2 = x * x + y * y
    return [unbroadcast(gs[0] * y / r2, x), unbroadcast(-gs[0] * x / r2, y)]


ATAN2 = binary("atan2", lambda x, y: np.arctan2(float_in(x), float_in(y)), _atan2_grad,
               float_only=True, doc="The angle of the point (y, x): arctan(x / y) in the "
                                    "quadrant of (y, x), in (-pi, pi].")

LOGADDEXP = binary(
    "logaddexp", lambda x, y: np.logaddexp(float_in(x), float_in(y)),
    lambda ins, outs, gs, a: [unbroadcast(gs[0] * exp(ins[0] - outs[0]), ins[0]),
                              unbroadcast(gs[0] * exp(ins[1] - outs[0]), ins[1])],
    float_only=True, doc="log(exp(x) + exp(y)) without overflow.")

tan = unary_fn(TAN, "Tangent elementwise.")
asin = unary_fn(ASIN, "Arcsine elementwise (nan outside [-1, 1]).")
acos = unary_fn(ACOS, "Arccosine elementwise (nan outside [-1, 1]).")
atan = unary_fn(ATAN, "Arctangent elementwise.")
sinh = unary_fn(SINH, "Hyperbolic sine elementwise.")
cosh = unary_fn(COSH, "Hyperbolic cosine elementwise.")
asinh = unary_fn(ASINH, "Inverse hyperbolic sine elementwise.")
acosh = unary_fn(ACOSH, "Inverse hyperbolic cosine elementwise (nan below 1).")
atanh = unary_fn(ATANH, "Inverse hyperbolic tangent elementwise (nan outside [-1, 1]).")
expm1 = unary_fn(EXPM1, """exp(x) - 1, accurate for small x.

    >>> import runtime as rt
    >>> rt.expm1(rt.to_tensor([0.0])).tolist()
    [0.0]
    """)
trunc = unary_fn(TRUNC, """x rounded towards zero.

    >>> import runtime as rt
    >>> rt.trunc(rt.to_tensor([-1.7, 2.5])).tolist()
    [-1.0, 2.0]
    """)
logaddexp = binary_fn(LOGADDEXP, """log(exp(x) + exp(y)) elementwise, without overflow (the
    gradient is split by softmax weights, half each on ties).

    >>> import runtime as rt
    >>> rt.logaddexp(rt.to_tensor([1000.0]), rt.to_tensor([1000.0])).tolist()
    [1000.6931762695312]
    """)
atan2 = binary_fn(ATAN2, """The angle of the point whose coordinates are (y, x) (Paddle's
    argument order: `atan2(x, y)` is arctan(x / y) in the right quadrant), in (-pi, pi].

    >>> import runtime as rt
    >>> round(rt.atan2(rt.to_tensor(1.0), rt.to_tensor(-1.0)).item(), 4)
    2.3562
    """)


def frac(x, name=None):
    """The fractional part `x - trunc(x)` (its sign is x's).

    >>> import runtime as rt
    >>> rt.frac(rt.to_tensor([-1.75, 2.5])).tolist()
    [-0.75, 0.5]
    """
    return x - trunc(x)


def logit(x, eps: float | None = None, name=None):
    """log(x / (1 - x)); with `eps`, x is first clipped to [eps, 1 - eps] (no gradient
    outside it).

    >>> import runtime as rt
    >>> rt.logit(rt.to_tensor([0.5])).tolist()
    [0.0]
    """
    if eps is not None:
        x = clip(x, eps, 1.0 - eps)
    return log(x / (_ONE - x))


def deg2rad(x, name=None):
    """Degrees to radians (integer tensors give float32)."""
    return scale(x if x.dtype.is_floating else x.astype("float32"), np.pi / 180.0)


def rad2deg(x, name=None):
    """Radians to degrees (integer tensors give float32)."""
    return scale(x if x.dtype.is_floating else x.astype("float32"), 180.0 / np.pi)


def hypot(x, y, name=None):
    """sqrt(x * x + y * y) with broadcasting (a zero gradient at the origin).

    >>> import runtime as rt
    >>> rt.hypot(rt.to_tensor([3.0]), rt.to_tensor([4.0])).tolist()
    [5.0]
    """
    r2 = x * x + y * y
    safe = where(r2 > 0, r2, _ONE)
    return where(r2 > 0, sqrt(safe), 0.0 * r2)


METHODS = {"tan": tan, "asin": asin, "acos": acos, "atan": atan, "sinh": sinh, "cosh": cosh,
           "asinh": asinh, "acosh": acosh, "atanh": atanh, "expm1": expm1, "trunc": trunc,
           "atan2": atan2, "frac": frac, "logit": logit, "deg2rad": deg2rad,
           "rad2deg": rad2deg, "hypot": hypot, "logaddexp": logaddexp}

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "deg2rad",
           "expm1", "frac", "hypot", "logaddexp", "logit", "rad2deg", "sinh", "tan", "trunc"]
