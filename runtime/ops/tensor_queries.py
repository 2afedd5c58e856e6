"""Questions about a tensor that its description answers, as Python values (the same in eager
and converted code, where the rank and dtype are known when the program is built): Paddle's
`Tensor.dim()` / `ndimension()` and `is_floating_point` / `is_complex` / `is_integer`."""
from __future__ import annotations

from .logic import isfinite, logical_and
from .math import floor


def dim(x) -> int:
    """The number of dims of `x`, a Python int (as `x.ndim`; `rt.rank` gives a tensor).

    >>> import runtime as rt
    >>> rt.ones([2, 3]).dim()
    2
    """
    return len(x.shape)


def is_floating_point(x) -> bool:
    """Whether `x` holds floating-point numbers (float16, bfloat16, float32, float64).

    >>> import runtime as rt
    >>> rt.is_floating_point(rt.ones([2])), rt.ones([2], "int64").is_floating_point()
    (True, False)
    """
    return x.dtype.is_floating


def is_complex(x) -> bool:
    """Whether `x` holds complex numbers (complex64, complex128)."""
    return x.dtype.is_complex


def is_integer(x):
    """Whether `x` holds integers (int8, int16, int32, int64, uint8; not bool).

    A program's value that stands for a Python number (`float(t)`, `int(t)` in converted
    code) answers the number's `is_integer()` instead: for a float whether the value is
    whole (a bool value that comes back as a Python bool), so `float(loss).is_integer()`
    means what it does eagerly.
    """
    if getattr(x, "python_scalar", False):
        if x.dtype.is_floating:
            out = logical_and(x == floor(x), isfinite(x))
            out.python_scalar = True
            return out
        if not hasattr(int, "is_integer"):  # (Python < 3.12: ints and bools lack it)
            kind = "bool" if x.dtype == "bool" else "int"
            raise AttributeError(f"'{kind}' object has no attribute 'is_integer'")
        return True
    return x.dtype.is_integer


METHODS = {"dim": dim, "ndimension": dim, "is_floating_point": is_floating_point,
           "is_complex": is_complex, "is_integer": is_integer}

__all__ = ["is_complex", "is_floating_point", "is_integer"]
