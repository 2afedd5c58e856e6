"""What every elementwise op module shares: Paddle's type promotion on kernel operands,
the broadcasting gradient helpers (`sum_to_like`, `expand_as`, `unbroadcast`), and the
factories that register a unary/binary op and make its public function.

The op modules (`math`, `logic`, `linalg`, `reduce`, `shape`, `gather`, ...) import these
from here, so none of them has to import another family for a helper.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import infer as I
from .registry import Meta, bind, register

PY_SCALARS = (int, float, bool)


def coerce(x, y):
    """Apply Paddle's type promotion to two kernel operands (arrays or Python scalars)."""
    if x.__class__ in PY_SCALARS:
        if x.__class__ is float and y.dtype.kind in "iub":
            y = y.astype(np.float32)
        return x, y
    if y.__class__ in PY_SCALARS:
        if y.__class__ is float and x.dtype.kind in "iub":
            x = x.astype(np.float32)
        return x, y
    if x.dtype is not y.dtype and x.dtype != y.dtype:
        dt = dtypes.promote(dtypes.of_array(x), dtypes.of_array(y)).np
        x, y = x.astype(dt, copy=False), y.astype(dt, copy=False)
    return x, y


def unbroadcast(g, x):
    """The gradient for input `x` of a broadcasting op: `g` summed back to x's shape."""
    if x.__class__ in PY_SCALARS or x is None:
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

def _binary_kernel(fn):
    def kernel(xp, x, y):
        # the common case (two arrays of one dtype) skips promotion; two Python scalars fail
        # here with AttributeError, and bind then reports the infer rule's error
        if x.__class__ is y.__class__ and x.dtype is y.dtype:
            return fn(x, y)
        return fn(*coerce(x, y))
    return kernel


def binary(name, fn, grad, *, nondiff=False, doc="", **infer_kw):
    return register(name, kernel=_binary_kernel(fn), infer=I.binary(name, **infer_kw),
                    grad=grad, nondiff=nondiff, doc=doc)


def named_after(op, doc: str):
    """Decorator for the public function of a table-defined op: named after `op`, with
    docstring `doc`."""
    def decorate(fn):
        fn.__name__ = fn.__qualname__ = op.name
        fn.__doc__ = doc
        return fn
    return decorate


def binary_fn(op, doc):
    @named_after(op, doc)
    def fn(x, y, name=None):
        return bind(op, (x, y), {})
    return fn


def unary_fn(op, doc):
    @named_after(op, doc)
    def fn(x, name=None):
        return bind(op, (x,), {})
    return fn


_FLOAT_NP = dtypes.NP_FLOATS  # bfloat16's NumPy kind is 'V', not 'f'


def is_float_array(x) -> bool:
    return x.dtype in _FLOAT_NP


def float_in(x):
    return x if x.dtype in _FLOAT_NP else x.astype(np.float32)


def unary(name, kernel, grad, *, float_only=True, allow=None, amp="promote", doc=""):
    return register(name, kernel=kernel, infer=I.unary(name, float_only=float_only, allow=allow),
                    grad=grad, amp=amp, doc=doc)


def reflected(fn):
    def reflected(x, y):
        return fn(y, x)
    reflected.__name__ = f"r{fn.__name__}"
    return reflected
