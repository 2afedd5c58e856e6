"""Elementwise functions about signs and nans: `fmax` / `fmin` (the number where the other is
nan), `copysign`, `signbit`, `heaviside`. Registered ops with gradient rules where Paddle
differentiates them; `heaviside` is composed of `where`."""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import bool_
from . import infer as I
from .elementwise import PY_SCALARS, binary, binary_fn, unary_fn, unbroadcast
from .logic import isnan, logical_or, where
from .math import cast, sign
from .registry import Meta, register


def _nan_aware_grad(pick_x):
    """fmax / fmin: the gradient goes to the element chosen (to y on ties, as `maximum`)."""
    def rule(ins, outs, gs, a):
        x, y = ins
        if y.__class__ in PY_SCALARS:  # a nan number: x is always taken
            take_x = isnan(x) | ~isnan(x) if math.isnan(y) else pick_x(x, y)
        else:
            take_x = logical_or(pick_x(x, y), isnan(y))
        take_x = cast(take_x, gs[0].dtype)
        gx = gs[0] * take_x
        return [unbroadcast(gx, x), unbroadcast(gs[0] - gx, y)]
    return rule


FMAX = binary("fmax", np.fmax, _nan_aware_grad(lambda x, y: x > y),
              doc="The larger of x and y; where one is nan, the other.")
FMIN = binary("fmin", np.fmin, _nan_aware_grad(lambda x, y: x < y),
              doc="The smaller of x and y; where one is nan, the other.")
COPYSIGN = binary(
    "copysign", lambda x, y: np.copysign(x, y).astype(np.result_type(x, y), copy=False),
    lambda ins, outs, gs, a: [unbroadcast(gs[0] * sign(ins[0]) * sign(outs[0]), ins[0]),
                              None],
    float_only=True, doc="|x| with the sign of y (y gets no gradient).")
SIGNBIT = register(
    "signbit", kernel=lambda xp, x: xp.signbit(x), nondiff=True, amp="keep",
    infer=lambda x: (I.check_tensor("signbit", "x", x), Meta(x.shape, bool_))[1],
    doc="True where x's sign bit is set (negative numbers and -0.0).")


fmax = binary_fn(FMAX, """The elementwise maximum, ignoring nan: where one of x and y is nan
    the other is taken (nan only where both are).

    >>> import runtime as rt
    >>> rt.fmax(rt.to_tensor([1.0, float("nan")]), rt.to_tensor([float("nan"), 2.0])).tolist()
    [1.0, 2.0]
    """)
fmin = binary_fn(FMIN, "The elementwise minimum, ignoring nan (see `fmax`).")
copysign = binary_fn(COPYSIGN, """|x| with the sign of y, elementwise.

    >>> import runtime as rt
    >>> rt.copysign(rt.to_tensor([1.0, -2.0]), rt.to_tensor([-1.0, 1.0])).tolist()
    [-1.0, 2.0]
    """)
signbit = unary_fn(SIGNBIT, """True where x is negative or -0.0 (a bool tensor).

    >>> import runtime as rt
    >>> rt.signbit(rt.to_tensor([-1.0, -0.0, 2.0])).tolist()
    [True, True, False]
    """)


def heaviside(x, y, name=None):
    """The step function: 0 where x < 0, `y` where x == 0, 1 where x > 0 (x and y broadcast;
    only y gets a gradient, where x == 0).

    >>> import runtime as rt
    >>> rt.heaviside(rt.to_tensor([-1.0, 0.0, 2.0]), rt.to_tensor(0.5)).tolist()
    [0.0, 0.5, 1.0]
    """
    zero = x * 0 + y * 0  # x and y broadcast and promoted, with no gradient of x
    return where(x == 0, y + zero, cast(x > 0, zero.dtype) + zero)


METHODS = {"fmax": fmax, "fmin": fmin, "copysign": copysign, "signbit": signbit,
           "heaviside": heaviside}

__all__ = ["copysign", "fmax", "fmin", "heaviside", "signbit"]
