"""Comparisons, logical and bitwise ops, `where`, and whole-tensor tests (`allclose`).

Comparisons and logical ops return bool tensors and never carry gradients. The operators
`== != < <= > >=` are elementwise; `& | ^ ~` are bitwise, which on bool tensors is logical.
`where(cond, x, y)` is differentiable in x and y.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import is_variable
from . import infer as I
from .elementwise import binary_fn, coerce, unary_fn, unbroadcast
from .registry import Meta, OpTypeError, bind, register

_B = dtypes.bool_


def _compare(name, fn):
    return register(name, kernel=lambda xp, x, y: fn(*coerce(x, y)),
                    infer=I.binary(name, out_dtype=_B), nondiff=True, amp="keep")


def _logical(name, fn):
    return register(name, kernel=lambda xp, x, y: fn(x, y), infer=I.binary(name, out_dtype=_B),
                    nondiff=True, amp="keep")


def _bitwise(name, fn):
    return register(name, kernel=lambda xp, x, y: fn(*coerce(x, y)),
                    infer=I.binary(name, int_only=True), nondiff=True, amp="keep")


def _predicate(name, fn, allow=None):
    return register(name, kernel=lambda xp, x: fn(x),
                    infer=I.unary(name, out_dtype=_B, allow=allow), nondiff=True, amp="keep")


EQUAL = _compare("equal", np.equal)
NOT_EQUAL = _compare("not_equal", np.not_equal)
LESS_THAN = _compare("less_than", np.less)
LESS_EQUAL = _compare("less_equal", np.less_equal)
GREATER_THAN = _compare("greater_than", np.greater)
GREATER_EQUAL = _compare("greater_equal", np.greater_equal)
LOGICAL_AND = _logical("logical_and", np.logical_and)
LOGICAL_OR = _logical("logical_or", np.logical_or)
LOGICAL_XOR = _logical("logical_xor", np.logical_xor)
LOGICAL_NOT = _predicate("logical_not", np.logical_not)
BITWISE_AND = _bitwise("bitwise_and", np.bitwise_and)
BITWISE_OR = _bitwise("bitwise_or", np.bitwise_or)
BITWISE_XOR = _bitwise("bitwise_xor", np.bitwise_xor)
BITWISE_NOT = register("bitwise_not", kernel=lambda xp, x: xp.invert(x),
                       infer=I.unary("bitwise_not", allow="biu"), nondiff=True, amp="keep")
ISFINITE = _predicate("isfinite", np.isfinite, allow="biuf")
ISNAN = _predicate("isnan", np.isnan, allow="biuf")
ISINF = _predicate("isinf", np.isinf, allow="biuf")


equal = binary_fn(EQUAL, """x == y elementwise, as a bool tensor.

    >>> import runtime as rt
    >>> rt.equal(rt.to_tensor([1, 2]), 2).tolist()
    [False, True]
    """)
not_equal = binary_fn(NOT_EQUAL, "x != y elementwise, as a bool tensor.")
less_than = binary_fn(LESS_THAN, "x < y elementwise, as a bool tensor.")
less_equal = binary_fn(LESS_EQUAL, "x <= y elementwise, as a bool tensor.")
greater_than = binary_fn(GREATER_THAN, "x > y elementwise, as a bool tensor.")
greater_equal = binary_fn(GREATER_EQUAL, "x >= y elementwise, as a bool tensor.")
logical_and = binary_fn(LOGICAL_AND, "x and y elementwise (nonzero is true).")
logical_or = binary_fn(LOGICAL_OR, "x or y elementwise (nonzero is true).")
logical_xor = binary_fn(LOGICAL_XOR, "x xor y elementwise (nonzero is true).")
logical_not = unary_fn(LOGICAL_NOT, "not x elementwise (nonzero is true).")
bitwise_and = binary_fn(BITWISE_AND, "x & y on integer or bool tensors.")
bitwise_or = binary_fn(BITWISE_OR, "x | y on integer or bool tensors.")
bitwise_xor = binary_fn(BITWISE_XOR, "x ^ y on integer or bool tensors.")
bitwise_not = unary_fn(BITWISE_NOT, "~x on integer or bool tensors.")
isfinite = unary_fn(ISFINITE, "True where x is neither inf nor nan.")
isnan = unary_fn(ISNAN, "True where x is nan.")
isinf = unary_fn(ISINF, "True where x is +inf or -inf.")


# ---- where ------------------------------------------------------------------------------------

def _where_infer(cond, x, y):
    I.check_tensor("where", "condition", cond)
    if cond.dtype is not _B:
        raise OpTypeError(f"where: condition must be a bool tensor, got {cond.dtype.name} "
                          f"of shape {I.fmt(cond.shape)}")
    m = I.binary("where")(x, y)
    shape = I.broadcast_shapes("where", cond.shape, m.shape, names=("condition", "x and y"))
    return Meta(shape, m.dtype)


def _where_grad(ins, outs, gs, a):
    cond, x, y = ins
    g = gs[0]
    return [None, unbroadcast(where(cond, g, 0.0), x), unbroadcast(where(cond, 0.0, g), y)]


def _where_kernel(xp, cond, x, y):
    if cond.dtype != np.bool_:
        raise TypeError("condition must be bool")  # bind reports the infer rule's message
    return xp.where(cond, *coerce(x, y))


WHERE = register("where", kernel=_where_kernel,
                 infer=_where_infer, grad=_where_grad)


def where(condition, x=None, y=None, name=None):
    """Elementwise `x if condition else y`, broadcasting all three (x, y may be scalars).

    >>> import runtime as rt
    >>> c = rt.to_tensor([True, False])
    >>> rt.where(c, rt.to_tensor([1.0, 2.0]), 0.0).tolist()
    [1.0, 0.0]
    """
    if x is None and y is None:
        raise TypeError("where: x and y are required (the one-argument form is "
                        "rt.nonzero(condition, as_tuple=True))")
    return bind(WHERE, (condition, x, y), {})


# ---- whole-tensor tests -----------------------------------------------------------------------

def _allclose_infer(x, y, **_):
    I.check_tensor("allclose", "x", x)
    I.check_tensor("allclose", "y", y)
    I.broadcast_shapes("allclose", x.shape, y.shape)
    return Meta((), _B)


ALLCLOSE = register(
    "allclose", kernel=lambda xp, x, y, rtol=1e-5, atol=1e-8, equal_nan=False: xp.asarray(
        xp.allclose(*coerce(x, y), rtol=rtol, atol=atol, equal_nan=equal_nan)),
    infer=_allclose_infer, nondiff=True, amp="keep")
EQUAL_ALL = register(
    "equal_all", kernel=lambda xp, x, y: xp.asarray(
        x.shape == y.shape and bool(xp.all(xp.equal(*coerce(x, y))))),
    infer=lambda x, y: Meta((), _B), nondiff=True, amp="keep",
    doc="True when x and y have the same shape and equal values.")


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A 0-d bool tensor: |x - y| <= atol + rtol * |y| everywhere.

    >>> import runtime as rt
    >>> bool(rt.allclose(rt.to_tensor([1.0]), rt.to_tensor([1.0 + 1e-9])))
    True
    """
    return bind(ALLCLOSE, (x, y), {"rtol": float(rtol), "atol": float(atol),
                                    "equal_nan": bool(equal_nan)})


def _isclose_infer(x, y, **_):
    I.check_tensor("isclose", "x", x)
    I.check_tensor("isclose", "y", y)
    return Meta(I.broadcast_shapes("isclose", x.shape, y.shape), _B)


ISCLOSE = register(
    "isclose", kernel=lambda xp, x, y, rtol=1e-5, atol=1e-8, equal_nan=False: xp.isclose(
        *coerce(x, y), rtol=rtol, atol=atol, equal_nan=equal_nan),
    infer=_isclose_infer, nondiff=True, amp="keep",
    doc="Elementwise |x - y| <= atol + rtol * |y|, as a bool tensor.")


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A bool tensor (x and y broadcast): |x - y| <= atol + rtol * |y| elementwise.

    >>> import runtime as rt
    >>> rt.isclose(rt.to_tensor([1.0, 2.0]), rt.to_tensor([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    """
    if is_variable(rtol) or is_variable(atol):  # (tolerances the program computes)
        return _isclose_computed(x, y, rtol, atol, bool(equal_nan))
    return bind(ISCLOSE, (x, y), {"rtol": float(rtol), "atol": float(atol),
                                   "equal_nan": bool(equal_nan)})


def _isclose_computed(x, y, rtol, atol, equal_nan: bool):
    """NumPy's isclose from elementwise ops: equal (infinities included), or both finite and
    |x - y| <= atol + rtol * |y|; nan with nan where `equal_nan`."""
    diff = x - y
    near = where(diff < 0, -diff, diff) <= atol + rtol * where(y < 0, -y, y)
    close = logical_or(x == y, logical_and(logical_and(isfinite(x), isfinite(y)), near))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(x), isnan(y)))
    return close


ISIN = register(
    "isin", kernel=lambda xp, x, test_x, invert=False: xp.isin(x, test_x, invert=invert),
    infer=lambda x, test_x, invert=False: (I.check_tensor("isin", "x", x),
                                           I.check_tensor("isin", "test_x", test_x),
                                           Meta(x.shape, _B))[2],
    nondiff=True, amp="keep", doc="True where an element of x occurs in test_x.")


def isin(x, test_x, assume_unique: bool = False, invert: bool = False, name=None):
    """A bool tensor of x's shape: True where the element occurs anywhere in `test_x`
    (False with `invert=True`). `assume_unique` is accepted and changes nothing.

    >>> import runtime as rt
    >>> rt.isin(rt.to_tensor([1, 2, 5]), rt.to_tensor([[5, 7], [1, 1]])).tolist()
    [True, False, True]
    """
    return bind(ISIN, (x, test_x), {"invert": bool(invert)})


def equal_all(x, y, name=None):
    """A 0-d bool tensor: same shape and all elements equal."""
    return bind(EQUAL_ALL, (x, y), {})


# ---- operators ----------------------------------------------------------------------------------

def _operator(fn):
    """`tensor <op> other`: anything that is not a number, array or tensor is not comparable
    (so `x == None` is False and `x in [a, b]` falls back to identity for such items)."""
    def method(self, other):
        if not (other.__class__ in (int, float, bool) or hasattr(other, "dtype")):
            return NotImplemented
        return fn(self, other)
    method.__name__ = fn.__name__
    return method


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    return method


METHODS = {
    "__eq__": _operator(equal), "__ne__": _operator(not_equal),
    "__lt__": _operator(less_than), "__le__": _operator(less_equal),
    "__gt__": _operator(greater_than), "__ge__": _operator(greater_equal),
    "__and__": bitwise_and, "__rand__": _reflected(bitwise_and),
    "__or__": bitwise_or, "__ror__": _reflected(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _reflected(bitwise_xor), "__invert__": bitwise_not,
    "equal": equal, "not_equal": not_equal, "less_than": less_than, "less_equal": less_equal,
    "greater_than": greater_than, "greater_equal": greater_equal, "logical_and": logical_and,
    "logical_or": logical_or, "logical_xor": logical_xor, "logical_not": logical_not,
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not, "isfinite": isfinite, "isnan": isnan, "isinf": isinf,
    "where": where, "allclose": allclose, "isclose": isclose, "isin": isin,
    "equal_all": equal_all,
}

__all__ = ["allclose", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "equal",
           "equal_all", "greater_equal", "greater_than", "isclose", "isfinite", "isin", "isinf",
           "isnan", "less_equal", "less_than", "logical_and", "logical_not", "logical_or",
           "logical_xor", "not_equal", "where"]
