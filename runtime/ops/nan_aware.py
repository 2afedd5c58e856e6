"""Paddle's functions that treat nan (and inf) specially, composed of `where`, `isnan` and
the reductions: `nansum`, `nanmean` (nan elements left out) and `nan_to_num` (nan and the
infinities replaced). Gradients come from those ops: a replaced element gets none."""
from __future__ import annotations

import numpy as np

from ..core import is_variable
from .logic import isnan, logical_not, where
from .math import cast
from .reduce import sum as sum_
from .registry import OpTypeError


def _float_only(op: str, x) -> None:
    if not x.dtype.is_floating:
        raise OpTypeError(f"{op}: x must be a floating tensor (float16, bfloat16, float32 or "
                          f"float64), got {x.dtype.name}")


def nansum(x, axis=None, dtype=None, keepdim=False, name=None):
    """The sum over `axis` with nan elements counted as zero.

    >>> import runtime as rt
    >>> rt.nansum(rt.to_tensor([1.0, float("nan"), 2.0])).item()
    3.0
    """
    if x.dtype.is_floating:
        x = where(isnan(x), 0.0, x)
    return sum_(x, axis, dtype=dtype, keepdim=keepdim)


def nanmean(x, axis=None, keepdim=False, name=None):
    """The mean over `axis` of the elements that are not nan (nan where all of them are).

    >>> import runtime as rt
    >>> rt.nanmean(rt.to_tensor([[1.0, float("nan")], [2.0, 4.0]]), axis=1).tolist()
    [1.0, 3.0]
    """
    _float_only("nanmean", x)
    present = logical_not(isnan(x))
    total = sum_(where(present, x, 0.0), axis, keepdim=keepdim)
    return total / sum_(cast(present, x.dtype), axis, keepdim=keepdim)


def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None,
               name=None):
    """`x` with nan replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default the
    largest and the lowest finite value of x's dtype). Integer tensors come back unchanged.

    >>> import runtime as rt
    >>> x = rt.to_tensor([float("nan"), float("inf"), -1.5])
    >>> rt.nan_to_num(x, posinf=9.0).tolist()
    [0.0, 9.0, -1.5]
    """
    if not x.dtype.is_floating:
        return x
    info = np.finfo(x.dtype.np) if x.dtype != "bfloat16" else None
    posinf = posinf if posinf is not None else (float(info.max) if info else 3.3895314e38)
    neginf = neginf if neginf is not None else (float(info.min) if info else -3.3895314e38)
    posinf, neginf, nan = (v if is_variable(v) else float(v)  # (`float(t)` in converted code)
                           for v in (posinf, neginf, nan))
    out = where(x == float("inf"), posinf, x)
    out = where(x == float("-inf"), neginf, out)
    return where(isnan(x), nan, out)


METHODS = {"nansum": nansum, "nanmean": nanmean, "nan_to_num": nan_to_num}

__all__ = ["nan_to_num", "nanmean", "nansum"]
