"""Tensor creation: full / zeros / ones (and their `_like` forms), arange, linspace, eye,
tril / triu.

Shapes may be Python ints, or contain tensors: eager Tensors or static Variables, as in
`rt.zeros([rt.shape(x)[0], 4])` where the first dim is only known at run time. `shape_args`
splits such a shape into plain data for the attrs (`None` where a tensor goes) and the tensors,
which become extra op inputs; `resolve_shape` (kernels) and `infer_shape` (infer rules) put
them back together. The shape, random and nn ops share these helpers.
"""
from __future__ import annotations

import math
import numbers
import operator

from ..dtypes import convert_dtype, default_float, int64
from . import infer as I
from .. import core
from .registry import Meta, OpError, OpTypeError, bind, register


def is_tensor(x) -> bool:
    """True for an eager Tensor or a static Variable."""
    return core.is_tensor(x)


def shape_args(op: str, shape, arg: str = "shape") -> tuple:
    """Split a shape argument into (attr, tensors).

    `attr` is a tuple of ints with `None` where a dim is a tensor, or `None` when the whole
    shape is one 1-D int tensor; `tensors` are the tensors, in order.
    """
    cls = shape.__class__
    if (cls is list or cls is tuple) and all(d.__class__ is int for d in shape):
        return tuple(shape), ()  # the common case, kept cheap for eager dispatch
    if is_tensor(shape):
        known = getattr(shape, "known_dims", None)  # (`rt.shape(x)` of a static shape)
        return (tuple(known), ()) if known is not None else (None, (shape,))
    if isinstance(shape, numbers.Integral):
        return (operator.index(shape),), ()
    if not isinstance(shape, (list, tuple)):
        raise OpTypeError(f"{op}: {arg} must be a list of ints or tensors, or a 1-D int tensor, "
                          f"got {type(shape).__name__} {shape!r}")
    attr, tensors = [], []
    for d in shape:
        if is_tensor(d):
            attr.append(None)
            tensors.append(d)
        elif isinstance(d, numbers.Integral):
            attr.append(operator.index(d))
        else:
            raise OpTypeError(f"{op}: {arg} entries must be ints or int tensors, got "
                              f"{type(d).__name__} {d!r} in {list(shape)!r}")
    return tuple(attr), tuple(tensors)


def resolve_shape(attr, dims) -> tuple:
    """The concrete shape at run time (kernel side of `shape_args`)."""
    if not dims:
        return attr
    if any(d.dtype.kind not in "iu" for d in dims):
        # a plain TypeError: `bind` then asks the infer rule for the message naming the op
        raise TypeError("shape tensors must be integers")
    if attr is None:
        return tuple(int(d) for d in dims[0].tolist())
    it = iter(dims)
    return tuple(int(next(it).item()) if d is None else d for d in attr)


# A program fixes every value's rank when it is built (a static dim may be -1, a rank not)
_UNKNOWN_RANK = (
    "{op}: the {arg} is a 1-D tensor whose length is only known when the program runs, so the "
    "result's rank would be too; a program needs the rank of every value when it is built. "
    "Pass the {arg} as a list with one entry per dim (ints or 0-d int tensors, as in "
    "[rt.shape(x)[0], 4]), or a tensor of a known length (rt.shape(x), or an InputSpec "
    "with a fixed length such as InputSpec([3], 'int64'))")


def infer_shape(op: str, attr, dims, arg: str = "shape") -> tuple:
    """The static shape (tensor dims are -1), checking the shape tensors' types."""
    for m in dims:
        I.check_tensor(op, arg, m)
        if not m.dtype.is_integer:
            raise OpTypeError(f"{op}: {arg} tensors must be integers, got {m.dtype.name}")
    if attr is None:
        (m,) = dims
        if len(m.shape) != 1:
            raise OpError(f"{op}: a {arg} tensor must be 1-D, got shape {I.fmt(m.shape)}")
        if m.shape[0] == -1:
            raise OpError(_UNKNOWN_RANK.format(op=op, arg=arg))
        return (-1,) * m.shape[0]
    for m in dims:
        if m.shape not in ((), (1,)) and -1 not in m.shape:
            raise OpError(f"{op}: a tensor entry of {arg} must hold one value, got shape "
                          f"{I.fmt(m.shape)}")
    return tuple(-1 if d is None else d for d in attr)


def _dtype_name(dtype, default) -> str:
    return (convert_dtype(dtype) if dtype is not None else default).name


def _item(v):
    """A Python scalar from a literal or a one-element array (run-time tensor arguments)."""
    return v.item() if hasattr(v, "item") and not isinstance(v, (int, float, bool)) else v


# ---- full / zeros / ones ---------------------------------------------------------------------

def _full_kernel(xp, value, *dims, shape, dtype):
    value = value.reshape(()) if hasattr(value, "reshape") else value
    return xp.full(resolve_shape(shape, dims), value, dtype=convert_dtype(dtype).np)


def _full_infer(value, *dims, shape, dtype):
    out = infer_shape("full", shape, dims)
    if shape is not None and any(d is not None and d < 0 for d in shape):
        raise OpError(f"full: shape {list(shape)} has a negative dim")
    if I.is_meta(value) and value.shape not in ((), (1,)) and -1 not in value.shape:
        raise OpError(f"full: fill_value must hold one value, got shape {I.fmt(value.shape)}")
    return Meta(out, convert_dtype(dtype))


FULL = register("full", kernel=_full_kernel, infer=_full_infer, nondiff=True, amp="keep",
                doc="A tensor of `shape` filled with `value` (a literal or a one-value tensor).")


def full(shape, fill_value, dtype=None, name=None):
    """A tensor of `shape` filled with `fill_value` (float32 unless `dtype` says otherwise;
    bool for a bool fill value).

    >>> import runtime as rt
    >>> rt.full([2, 2], 7, dtype='int64').tolist()
    [[7, 7], [7, 7]]
    """
    attr, dims = shape_args("full", shape)
    default = convert_dtype(bool) if isinstance(fill_value, bool) else default_float()
    return bind(FULL, (fill_value, *dims), {"shape": attr, "dtype": _dtype_name(dtype, default)})


def zeros(shape, dtype=None, name=None):
    """A tensor of zeros (float32 by default).

    >>> import runtime as rt
    >>> rt.zeros([2, 3]).shape
    [2, 3]
    """
    return full(shape, 0, default_float() if dtype is None else dtype)


def ones(shape, dtype=None, name=None):
    """A tensor of ones (float32 by default).

    >>> import runtime as rt
    >>> rt.ones([2]).tolist()
    [1.0, 1.0]
    """
    return full(shape, 1, default_float() if dtype is None else dtype)


empty = zeros


def _full_like_infer(x, value, dtype=None):
    I.check_tensor("full_like", "x", x)
    return Meta(x.shape, convert_dtype(dtype) if dtype is not None else x.dtype)


def _full_like_kernel(xp, x, value, dtype=None):
    value = value.reshape(()) if hasattr(value, "reshape") else value
    return xp.full(x.shape, value, dtype=convert_dtype(dtype).np if dtype else x.dtype)


FULL_LIKE = register("full_like", kernel=_full_like_kernel, infer=_full_like_infer,
                     nondiff=True, amp="keep",
                     doc="A tensor shaped like x filled with `value` (dtype None: x's dtype).")


def full_like(x, fill_value, dtype=None, name=None):
    """A tensor with x's shape (and dtype, unless given) filled with `fill_value`.

    >>> import runtime as rt
    >>> rt.full_like(rt.ones([2]), 3.0).tolist()
    [3.0, 3.0]
    """
    return bind(FULL_LIKE, (x, fill_value),
                {"dtype": None if dtype is None else convert_dtype(dtype).name})


def zeros_like(x, dtype=None, name=None):
    """Zeros with x's shape and dtype.

    >>> import runtime as rt
    >>> rt.zeros_like(rt.ones([2])).tolist()
    [0.0, 0.0]
    """
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None, name=None):
    """Ones with x's shape and dtype.

    >>> import runtime as rt
    >>> rt.ones_like(rt.zeros([2], dtype='int64')).tolist()
    [1, 1]
    """
    return full_like(x, 1, dtype)


empty_like = zeros_like


# ---- arange / linspace / eye -----------------------------------------------------------------

def _arange_kernel(xp, start, end, step, dtype):
    return xp.arange(_item(start), _item(end), _item(step), dtype=convert_dtype(dtype).np)


def _arange_infer(start, end, step, dtype):
    vals = []
    for arg, v in (("start", start), ("end", end), ("step", step)):
        if I.is_meta(v):
            if v.shape not in ((), (1,)) and -1 not in v.shape:
                raise OpError(f"arange: {arg} must hold one value, got shape {I.fmt(v.shape)}")
            vals.append(None)
        else:
            vals.append(v)
    if vals[2] == 0:
        raise OpError("arange: step must not be 0")
    if None in vals:
        return Meta((-1,), convert_dtype(dtype))
    n = max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    return Meta((n,), convert_dtype(dtype))


ARANGE = register("arange", kernel=_arange_kernel, infer=_arange_infer, nondiff=True,
                  amp="keep", doc="Evenly spaced values in [start, end) (literals or tensors).")


def arange(start=0, end=None, step=1, dtype=None, name=None):
    """Values from `start` to `end` (exclusive) by `step`: int64 when every bound is an
    integer, float32 otherwise. Bounds may be one-value tensors.

    >>> import runtime as rt
    >>> rt.arange(5).tolist()
    [0, 1, 2, 3, 4]
    """
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = all(v.dtype.is_integer if is_tensor(v) else isinstance(v, numbers.Integral)
                   for v in (start, end, step))
        dtype = int64 if ints else default_float()
    return bind(ARANGE, (start, end, step), {"dtype": convert_dtype(dtype).name})


def _linspace_kernel(xp, start, stop, num, dtype):
    dt = convert_dtype(dtype).np
    return xp.linspace(_item(start), _item(stop), int(_item(num))).astype(dt, copy=False)


def _linspace_infer(start, stop, num, dtype):
    if not I.is_meta(num) and num < 0:
        raise OpError(f"linspace: num must be non-negative, got {num}")
    return Meta((-1 if I.is_meta(num) else num,), convert_dtype(dtype))


LINSPACE = register("linspace", kernel=_linspace_kernel, infer=_linspace_infer, nondiff=True,
                    amp="keep", doc="`num` evenly spaced values from start to stop inclusive.")


def linspace(start, stop, num, dtype=None, name=None):
    """`num` evenly spaced values from `start` to `stop` (both included); float32 default.

    >>> import runtime as rt
    >>> rt.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    return bind(LINSPACE, (start, stop, num), {"dtype": _dtype_name(dtype, default_float())})


def _eye_sizes(dims, num_rows, num_columns) -> list:
    """The sizes, a tensor input where an attr is None (a size the program computes)."""
    it = iter(dims)
    return [next(it) if v is None else v for v in (num_rows, num_columns)]


def _check_size_tensor(arg: str, v) -> None:
    """`v`: the Meta (infer) or the array (kernel) of a size given as a tensor."""
    if v.dtype.kind not in "iu" or len(v.shape) > 1:
        raise OpTypeError(f"eye: {arg} must be an int or a one-element int tensor, got a "
                          f"{v.dtype.name} tensor of shape {I.fmt(tuple(v.shape))}")


def _eye_infer(*dims, num_rows, num_columns, dtype):
    shape = []
    for arg, v in zip(("num_rows", "num_columns"), _eye_sizes(dims, num_rows, num_columns)):
        if I.is_meta(v):
            _check_size_tensor(arg, v)
            shape.append(-1)
        elif not isinstance(v, int) or v < 0:
            raise OpError(f"eye: {arg} must be a non-negative int, got {v!r}")
        else:
            shape.append(v)
    return Meta(tuple(shape), convert_dtype(dtype))


def _eye_kernel(xp, *dims, num_rows, num_columns, dtype):
    for arg, v in zip(("num_rows", "num_columns"), (num_rows, num_columns)):
        if v is None:  # (eager: the same refusal as the infer rule's)
            _check_size_tensor(arg, dims[0] if arg == "num_rows" else dims[-1])
    n, m = (v if v.__class__ is int else int(_item(v))
            for v in _eye_sizes(dims, num_rows, num_columns))
    return xp.eye(n, m, dtype=convert_dtype(dtype).np)


EYE = register("eye", kernel=_eye_kernel, infer=_eye_infer, nondiff=True, amp="keep",
               doc="The identity matrix (ones on the main diagonal).")


def eye(num_rows, num_columns=None, dtype=None, name=None):
    """A 2-D tensor with ones on the diagonal (float32 by default); a size may be a
    one-element int tensor (`rt.eye(2 * n)` of a batch size known only when a program runs).

    >>> import runtime as rt
    >>> rt.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    cols = num_rows if num_columns is None else num_columns
    sizes = (num_rows, cols)
    return bind(EYE, tuple(v for v in sizes if is_tensor(v)), {
        "num_rows": None if is_tensor(num_rows) else num_rows,
        "num_columns": None if is_tensor(cols) else cols,
        "dtype": _dtype_name(dtype, default_float())})


# ---- tril / triu -----------------------------------------------------------------------------

def _check_2d(op: str, shape):
    if len(shape) < 2:
        raise OpError(f"{op}: x must have at least 2 dims, got shape {I.fmt(shape)}")


def _tri_infer(op):
    def rule(x, diagonal=0):
        I.check_tensor(op, "x", x)
        _check_2d(op, x.shape)
        return Meta(x.shape, x.dtype)
    return rule


def _tri_kernel(op):
    def kernel(xp, x, diagonal=0):
        _check_2d(op, x.shape)
        return getattr(xp, op)(x, diagonal)
    return kernel


TRIL = register("tril", kernel=_tri_kernel("tril"),
                infer=_tri_infer("tril"),
                grad=lambda ins, outs, gs, a: [tril(gs[0], a.get("diagonal", 0))],
                doc="Zero the elements above the `diagonal`-th diagonal (last two dims).")
TRIU = register("triu", kernel=_tri_kernel("triu"),
                infer=_tri_infer("triu"),
                grad=lambda ins, outs, gs, a: [triu(gs[0], a.get("diagonal", 0))],
                doc="Zero the elements below the `diagonal`-th diagonal (last two dims).")


def tril(x, diagonal: int = 0, name=None):
    """The lower triangle of x (last two dims); the rest is zero.

    >>> import runtime as rt
    >>> rt.tril(rt.ones([2, 2])).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    if core.is_variable(diagonal):  # (`int(t)` in converted code: a run-time diagonal)
        return _triangle(x, diagonal, "tril")
    return bind(TRIL, (x,), {"diagonal": diagonal} if diagonal else {})


def triu(x, diagonal: int = 0, name=None):
    """The upper triangle of x (last two dims); the rest is zero.

    >>> import runtime as rt
    >>> rt.triu(rt.ones([2, 2])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    if core.is_variable(diagonal):  # (`int(t)` in converted code: a run-time diagonal)
        return _triangle(x, diagonal, "triu")
    return bind(TRIU, (x,), {"diagonal": diagonal} if diagonal else {})


def _triangle(x, diagonal, which: str):
    """tril / triu with a diagonal the program computes: x where column - row is at most
    (tril) or at least (triu) the diagonal, else zero."""
    from .logic import where
    rows, cols = x.shape[-2], x.shape[-1]
    if rows < 0 or cols < 0:
        raise OpError(f"{which}: the last two dims of x must have fixed sizes for a diagonal "
                      f"the converted code computes, got x of shape {I.fmt(x.shape)}")
    offset = arange(0, cols, dtype="int64").reshape([1, cols]) - \
        arange(0, rows, dtype="int64").reshape([rows, 1])
    keep = offset <= diagonal if which == "tril" else offset >= diagonal
    return where(keep, x, zeros_like(x))


METHODS = {"tril": tril, "triu": triu}

__all__ = [
    "arange",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]
