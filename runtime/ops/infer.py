"""Shape and dtype inference shared by many ops (static shapes use -1 for unknown dims).

Every failure raises `OpError` (shapes, axes) or `OpTypeError` (dtypes) naming the op, the
argument and the shapes, so eager and static mode report bad inputs the same way.
"""
from __future__ import annotations

from ..core import is_variable
from ..dtypes import DEFAULT_FLOAT, DType, bool_, promote, promote_scalar
from .registry import Meta, OpError, OpTypeError


def fmt(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def broadcast_shapes(op: str, a: tuple, b: tuple, names=("x", "y")) -> tuple:
    """NumPy broadcasting with -1 (unknown) dims: an unknown dim against 1 stays unknown,
    against a known n > 1 it becomes n (the run time checks the rest)."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da == db or db == 1:
            out.append(da)
        elif da == 1 or da == -1:
            out.append(db)
        elif db == -1:
            out.append(da)
        else:
            raise OpError(
                f"{op}: {names[0]} has shape {fmt(a)} but {names[1]} has shape {fmt(b)}; "
                f"dims {da} and {db} (axis {-i}) cannot be broadcast")
    return tuple(reversed(out))


def is_meta(x) -> bool:
    return isinstance(x, Meta)


def binary_dtype(op: str, x, y) -> DType:
    if is_meta(x) and is_meta(y):
        return promote(x.dtype, y.dtype)
    if is_meta(x):
        return promote_scalar(x.dtype, y)
    if is_meta(y):
        return promote_scalar(y.dtype, x)
    raise OpTypeError(f"{op}: at least one input must be a tensor, got {x!r} and {y!r}")


def binary(op: str, *, out_dtype=None, float_only=False, int_only=False):
    """Inference for elementwise binary ops with broadcasting and Paddle type promotion.
    `out_dtype` fixes the result type (bool for comparisons)."""

    def rule(x, y):
        dt = binary_dtype(op, x, y)
        if float_only and not dt.is_floating:
            dt = DEFAULT_FLOAT
        if int_only and dt.is_floating:
            raise OpTypeError(f"{op}: expected integer or bool inputs, got {dt.name}")
        xs = x.shape if is_meta(x) else ()
        ys = y.shape if is_meta(y) else ()
        return Meta(broadcast_shapes(op, xs, ys), out_dtype or dt)

    return rule


def unary(op: str, *, float_only=False, out_dtype=None, allow=None):
    """Inference for elementwise unary ops: same shape; integer inputs become float32 for
    float-only math (exp, sin, ...)."""

    def rule(x, **_):
        check_tensor(op, "x", x)
        dt = x.dtype
        if allow is not None and dt.kind not in allow:
            raise OpTypeError(f"{op}: x has dtype {dt.name}, which {op} does not support")
        if float_only and not dt.is_floating:
            dt = DEFAULT_FLOAT
        return Meta(x.shape, out_dtype or dt)

    return rule


def check_tensor(op: str, arg: str, x):
    if not is_meta(x):
        raise OpTypeError(f"{op}: {arg} must be a tensor, got {type(x).__name__} {x!r}")


class ComputedNumberError(OpTypeError):
    """A number the converted code computes given where the op needs a Python number while
    the program is built (d2s shows it as a ConversionError at the user's line)."""


def python_int(op: str, arg: str, value, decides: str = "the result's shape") -> None:
    """Refuse a number the converted code computes (`int(t)`, `t.item()`: a graph value) as
    an argument that a program fixes when it is built (an axis, a count, a size)."""
    if is_variable(value):
        raise ComputedNumberError(
            f"{op}: {arg} is a number the converted code computes from a tensor (`int(t)`, "
            f"`t.item()`), known only when the program runs; {arg} decides {decides}, which "
            f"the program fixes when it is built. Pass {arg} as a Python int (a constant, a "
            f"shape, or a number computed from Python values)")


def norm_axis(op: str, axis: int, ndim: int, arg="axis") -> int:
    python_int(op, arg, axis, "which axis the op works on")
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise OpTypeError(f"{op}: {arg} must be an int, got {axis!r}")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise OpError(f"{op}: {arg}={axis} is out of range for a tensor of rank {ndim} "
                      f"(valid: {-max(ndim, 1)} .. {max(ndim, 1) - 1})")
    return axis % ndim if ndim else 0


def norm_axes(op: str, axis, ndim: int) -> tuple | None:
    """None -> None (all axes); int or sequence -> sorted tuple of non-negative axes."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = sorted({norm_axis(op, a, ndim) for a in axes})
    return tuple(out)


def reduce(op: str, *, out_dtype=None, float_only=False, allow_bool=True):
    """Inference for reductions with `axis` (None, int or tuple) and `keepdim`."""

    def rule(x, axis=None, keepdim=False, **_):
        check_tensor(op, "x", x)
        axes = norm_axes(op, axis, len(x.shape))
        if axes is None:
            axes = tuple(range(len(x.shape)))
        shape = tuple((1 if keepdim else None) if i in axes else d
                      for i, d in enumerate(x.shape))
        dt = out_dtype or x.dtype
        if float_only and not dt.is_floating:
            dt = DEFAULT_FLOAT
        if not allow_bool and dt is bool_:
            raise OpTypeError(f"{op}: x has dtype bool, which {op} does not support")
        return Meta(tuple(d for d in shape if d is not None), dt)

    return rule


def same_as(index: int = 0):
    """Output has the shape and dtype of input number `index`."""

    def rule(*metas, **_):
        return Meta(metas[index].shape, metas[index].dtype)

    return rule
