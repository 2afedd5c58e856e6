"""Order statistics composed from `sort` and slicing (their gradients flow to the elements
picked): `quantile` (NumPy's and Paddle's interpolations), `median` (the 0.5 quantile: the
mean of the two middle elements of an even count) and `kthvalue`."""
from __future__ import annotations

import math

from ..core import is_variable
from . import infer as I
from .combine import stack
from .gather import argsort, sort
from .index import slice as slice_
from .math import cast
from .registry import OpError
from .shape import reshape, squeeze

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _pick(s, axis: int, q: float, n: int, interpolation: str):
    pos = q * (n - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if interpolation == "nearest":  # (NumPy's: halves round to the even neighbour)
        lo = hi = round(pos)
    elif interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    low = slice_(s, [axis], [lo], [lo + 1])
    if hi == lo:
        return low
    high = slice_(s, [axis], [hi], [hi + 1])
    w = 0.5 if interpolation == "midpoint" else pos - lo
    return low * (1.0 - w) + high * w


def quantile(x, q, axis=None, keepdim: bool = False, interpolation: str = "linear",
             name=None):
    """The `q`-quantile(s) of `x` along `axis` (of all elements when None). A list of q
    gives one result per q, stacked on a new first axis.

    >>> import runtime as rt
    >>> rt.quantile(rt.to_tensor([1.0, 2.0, 4.0, 8.0]), 0.5).item()
    3.0
    """
    if interpolation not in _INTERPOLATIONS:
        raise OpError(f"quantile: interpolation={interpolation!r}; use one of "
                      f"{list(_INTERPOLATIONS)}")
    qs = list(q) if isinstance(q, (list, tuple)) else [q]
    if not qs or any(not is_variable(v) and not 0 <= float(v) <= 1 for v in qs):
        raise OpError(f"quantile: q={q!r}; every q must be in [0, 1]")
    ndim = len(x.shape)
    if axis is None:
        src, a = reshape(x, [-1]), 0
    else:
        src, a = x, I.norm_axis("quantile", axis, ndim)
    n = src.shape[a]
    if n == -1:
        raise OpError("quantile: the size of the axis reduced is unknown (-1) while building "
                      "a program; give that dim a fixed size in the InputSpec")
    if n == 0:
        raise OpError("quantile: the axis reduced is empty")
    s = sort(src, axis=a)
    outs = []
    for v in qs:
        out = (_pick_computed(s, a, v, n, interpolation) if is_variable(v)
               else _pick(s, a, float(v), n, interpolation))
        if axis is None:
            out = reshape(out, [1] * ndim) if keepdim else reshape(out, [])
        elif not keepdim:
            out = squeeze(out, [a])
        outs.append(out)
    return stack(outs, 0) if isinstance(q, (list, tuple)) else outs[0]


def _pick_computed(s, axis: int, q, n: int, interpolation: str):
    """`_pick` for a q the program computes (`float(t)` in converted code): the positions
    are run-time values, the elements taken with `index_select`; q's range is checked when
    the program runs (eager's OpError)."""
    from .gather import index_select
    from .logic import logical_and, where
    from .math import ceil, floor
    from .number_checks import checked
    q = cast(q, "float64")
    q = checked(q, logical_and(q >= 0.0, q <= 1.0), "quantile: q={}; every q must be in [0, 1]")
    pos = q * float(n - 1)
    lo, hi = floor(pos), ceil(pos)
    if interpolation == "nearest":  # (NumPy's: halves round to the even neighbour)
        r = floor(pos + 0.5)
        lo = hi = where(logical_and(r - pos == 0.5, r - floor(r / 2.0) * 2.0 == 1.0), r - 1.0, r)
    elif interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    low = index_select(s, reshape(cast(lo, "int64"), [1]), axis)
    if hi is lo:
        return low
    high = index_select(s, reshape(cast(hi, "int64"), [1]), axis)
    w = 0.5 if interpolation == "midpoint" else cast(pos - lo, s.dtype)
    return low * (1.0 - w) + high * w


def median(x, axis=None, keepdim: bool = False, mode: str = "avg", name=None):
    """The median along `axis` (of all elements when None): for an even count, the mean of
    the two middle elements (Paddle's mode='avg').

    >>> import runtime as rt
    >>> rt.median(rt.to_tensor([[3.0, 1.0], [2.0, 5.0]]), axis=1).tolist()
    [2.0, 3.5]
    """
    if mode != "avg":
        raise OpError(f"median: mode={mode!r} is not supported; use mode='avg' (or "
                      "rt.quantile(x, 0.5, interpolation='lower') for the lower middle)")
    if not x.dtype.is_floating:  # (Paddle's median of ints is float32)
        x = cast(x, "float32")
    return quantile(x, 0.5, axis, keepdim)


def kthvalue(x, k: int, axis: int | None = None, keepdim: bool = False, name=None):
    """The k-th smallest element along `axis` (default the last) and its index: (values,
    int64 indices). The gradient goes to the element picked.

    >>> import runtime as rt
    >>> values, index = rt.kthvalue(rt.to_tensor([[3.0, 1.0, 2.0]]), 2)
    >>> values.tolist(), index.tolist()
    ([2.0], [2])
    """
    axis = I.norm_axis("kthvalue", -1 if axis is None else int(axis), len(x.shape), "axis")
    n = x.shape[axis] if x.shape else 1
    if not isinstance(k, int) or not 1 <= k <= (n if n != -1 else k):
        raise OpError(f"kthvalue: k={k!r} must be an int in [1, {n}] (the size of axis {axis})")
    if not x.shape:
        return x, cast(x * 0, "int64")
    values = slice_(sort(x, axis), [axis], [k - 1], [k])
    index = slice_(argsort(x, axis), [axis], [k - 1], [k])
    if keepdim:
        return values, index
    return squeeze(values, axis), squeeze(index, axis)


METHODS = {"quantile": quantile, "median": median, "kthvalue": kthvalue}

__all__ = ["kthvalue", "median", "quantile"]
