"""Paddle's names that are compositions of other ops (so eager autograd, static programs and
gradients come from those ops): `reciprocal`, `masked_fill`, `view` / `view_as`,
`broadcast_shape`, `meshgrid`, `kron`, `log2` / `log10`, `outer`, `lerp`, `vander`; and
`is_tensor` (from `creation`) at Paddle's place."""
from __future__ import annotations

import numpy as np

from .. import core
from ..dtypes import DType, convert_dtype
from .combine import stack
from .creation import full_like, is_tensor
from .logic import where
from .math import cast, divide, log, multiply, scale
from .registry import OpError
from .shape import expand, reshape
from .shape import shape as shape_of


def reciprocal(x, name=None):
    """`1 / x` elementwise.

    >>> import runtime as rt
    >>> rt.reciprocal(rt.to_tensor([2.0, 4.0])).tolist()
    [0.5, 0.25]
    """
    return divide(1.0, x)


def masked_fill(x, mask, value, name=None):
    """`x` with `value` where the bool `mask` (broadcast to x) is true; a tensor `value` (one
    element) takes x's dtype and gets its gradient.

    >>> import runtime as rt
    >>> x = rt.to_tensor([1.0, 2.0, 3.0])
    >>> rt.masked_fill(x, x > 1.5, -1.0).tolist()
    [1.0, -1.0, -1.0]
    """
    if core.is_tensor(mask) and mask.dtype != "bool":
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype.name}")
    if core.is_tensor(value):
        fill = cast(value, x.dtype) if value.dtype != x.dtype else value
    else:
        fill = full_like(x, value)
    return where(mask, fill, x)


def view(x, shape_or_dtype, name=None):
    """`x` with another shape (a reshape; -1 and 0 as in `reshape`).

    >>> import runtime as rt
    >>> rt.view(rt.arange(6), [2, 3]).shape
    [2, 3]
    """
    if isinstance(shape_or_dtype, (str, DType, type, np.dtype)):
        raise TypeError(
            f"view: reinterpreting the bytes of a tensor as {convert_dtype(shape_or_dtype).name} "
            "is not supported (arrays here may live on another device); use cast or astype "
            "to convert the values")
    return reshape(x, shape_or_dtype)


def view_as(x, other, name=None):
    """`x` reshaped to `other`'s shape.

    >>> import runtime as rt
    >>> rt.view_as(rt.arange(6), rt.ones([3, 2])).shape
    [3, 2]
    """
    return reshape(x, other.shape if -1 not in other.shape else shape_of(other))


def broadcast_shape(x_shape, y_shape) -> list:
    """The shape two shapes broadcast to (NumPy's rules).

    >>> import runtime as rt
    >>> rt.broadcast_shape([2, 1, 3], [4, 1])
    [2, 4, 3]
    """
    try:
        return [int(d) for d in np.broadcast_shapes(tuple(x_shape), tuple(y_shape))]
    except ValueError:
        raise ValueError(f"broadcast_shape: shapes {list(x_shape)} and {list(y_shape)} do not "
                         "broadcast (each dim must match or be 1)") from None


def meshgrid(*args, name=None):
    """Coordinate grids from 1-D tensors ('ij' indexing): output k varies along axis k.

    >>> import runtime as rt
    >>> a, b = rt.meshgrid(rt.to_tensor([1, 2]), rt.to_tensor([3, 4, 5]))
    >>> a.shape, b.tolist()[0]
    ([2, 3], [3, 4, 5])
    """
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    for i, t in enumerate(tensors):
        if len(t.shape) != 1:
            raise OpError(f"meshgrid: input {i} has shape {list(t.shape)}; inputs must be 1-D")
    dims = [t.shape[0] if t.shape[0] != -1 else shape_of(t)[0] for t in tensors]
    n = len(tensors)
    return [expand(reshape(t, [1] * k + [-1] + [1] * (n - k - 1)), dims)
            for k, t in enumerate(tensors)]


def kron(x, y, name=None):
    """The Kronecker product: block (i, j, ...) of the result is `x[i, j, ...] * y`.

    >>> import runtime as rt
    >>> rt.kron(rt.to_tensor([1, 10]), rt.to_tensor([1, 2])).tolist()
    [1, 2, 10, 20]
    """
    xs, ys = list(x.shape), list(y.shape)
    if -1 in xs or -1 in ys:
        raise OpError(f"kron: shapes {xs} and {ys} have unknown dims; kron needs known shapes")
    n = max(len(xs), len(ys))
    xs, ys = [1] * (n - len(xs)) + xs, [1] * (n - len(ys)) + ys
    xi = reshape(x, [d for a in xs for d in (a, 1)])  # x's dims at even places, y's at odd
    yi = reshape(y, [d for b in ys for d in (1, b)])
    return reshape(multiply(xi, yi), [a * b for a, b in zip(xs, ys)])


def log2(x, name=None):
    """Base-2 logarithm elementwise (integer inputs give float32).

    >>> import runtime as rt
    >>> rt.log2(rt.to_tensor([1.0, 8.0])).tolist()
    [0.0, 3.0]
    """
    return scale(log(x), 1.0 / np.log(2.0))


def log10(x, name=None):
    """Base-10 logarithm elementwise (integer inputs give float32), as dB conversions use it.

    >>> import runtime as rt
    >>> rt.log10(rt.to_tensor([1.0, 100.0])).tolist()
    [0.0, 2.0]
    """
    return scale(log(x), 1.0 / np.log(10.0))


def outer(x, y, name=None):
    """The outer product of two vectors (inputs of other ranks are flattened first), as
    rotary-embedding tables are built: `out[i, j] = x[i] * y[j]`.

    >>> import runtime as rt
    >>> rt.outer(rt.to_tensor([1.0, 2.0]), rt.to_tensor([3.0, 4.0, 5.0])).tolist()
    [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    """
    return multiply(reshape(x, [-1, 1]), reshape(y, [1, -1]))


def lerp(x, y, weight, name=None):
    """`x + weight * (y - x)` with broadcasting; `weight` is a number or a tensor (it gets
    a gradient too).

    >>> import runtime as rt
    >>> rt.lerp(rt.to_tensor([0.0, 2.0]), rt.to_tensor([4.0, 4.0]), 0.25).tolist()
    [1.0, 2.5]
    """
    return x + multiply(weight, y - x)


def vander(x, n: int | None = None, increasing: bool = False, name=None):
    """The Vandermonde matrix of the 1-D `x`: columns x ** (n-1), ..., x, 1 (`increasing`:
    1, x, ..., x ** (n-1)); n defaults to len(x). Built by repeated products, so the
    gradient is exact at 0.

    >>> import runtime as rt
    >>> rt.vander(rt.to_tensor([2.0, 3.0]), 3).tolist()
    [[4.0, 2.0, 1.0], [9.0, 3.0, 1.0]]
    """
    if len(x.shape) != 1:
        raise OpError(f"vander: x must be 1-D, got shape {list(x.shape)}")
    n = x.shape[0] if n is None else n
    if not isinstance(n, int) or n < 0:
        raise OpError(f"vander: n must be a non-negative int known when the program is built, "
                      f"got {n!r}")
    if not x.dtype.is_floating:
        x = cast(x, "float32")
    cols = [full_like(x, 1.0)] if n else []
    for _ in range(1, n):
        cols.append(multiply(cols[-1], x))
    if not increasing:
        cols.reverse()
    return stack(cols, axis=1) if cols else reshape(x, [-1, 1])[:, 0:0]


METHODS = {"reciprocal": reciprocal, "lerp": lerp, "masked_fill": masked_fill, "view": view,
           "view_as": view_as, "kron": kron, "log2": log2, "log10": log10,
           "outer": outer}

__all__ = ["broadcast_shape", "is_tensor", "kron", "lerp", "log2", "log10", "masked_fill",
           "meshgrid", "outer", "reciprocal", "vander", "view", "view_as"]
