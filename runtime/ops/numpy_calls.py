"""NumPy's own functions as ops, for converted code that calls them on a NumPy value the
program computes (`np.percentile(x.numpy(), 75)`, `np.linalg.eigh(adj.numpy())`:
`runtime/program/numpy_stats.py`). The kernel is NumPy's function, so a run gives what eager
code gets; the infer rule gives NumPy's result dtype (NumPy run on one-element stand-ins of
the inputs' dtypes) and its result shape, -1 where the input's dim is unknown. None carries a
gradient (eager NumPy has none).

`np_quantile`: percentile, quantile, median and their nan* forms (attrs: `fn`, `q`, `axis`,
`keepdims`, `method`). `np_linalg`: eigh, eigvalsh, inv, det, solve, svd, norm (attrs: `fn`
and NumPy's keyword arguments, `options`).
"""
from __future__ import annotations

import numpy as np

from ..backend import to_numpy
from ..dtypes import convert_dtype
from . import infer as I
from .registry import Meta, OpError, as_eager, register

QUANTILES = ("percentile", "quantile", "median", "nanpercentile", "nanquantile", "nanmedian")
LINALG = ("eigh", "eigvalsh", "inv", "det", "solve", "svd", "norm")


def _q(q, q_dtype):
    """The `q` NumPy gets: a Python number as given (weak, NEP 50), else an array."""
    return q if q_dtype is None else np.asarray(q, q_dtype)


def _quantile_call(xp, a, fn, q=None, q_dtype=None, axis=None, keepdims=False,
                   method="linear"):
    kw = {"axis": axis, "keepdims": keepdims}
    if fn.endswith("median"):
        return getattr(np, fn)(a, **kw)
    return getattr(np, fn)(a, _q(q, q_dtype), method=method, **kw)


def _quantile_kernel(xp, a, **attrs):
    try:
        return xp.asarray(_quantile_call(xp, to_numpy(a), **attrs))  # (NumPy's, on the host)
    except Exception as e:  # (NumPy's own error, as eager code gets it: an empty array)
        raise as_eager(e) from None


def _quantile_infer(a, fn, q=None, q_dtype=None, axis=None, keepdims=False, method="linear"):
    I.check_tensor(fn, "a", a)
    ndim = len(a.shape)
    axes = tuple(range(ndim)) if axis is None else tuple(
        I.norm_axis(fn, k, ndim) for k in ((axis,) if isinstance(axis, int) else axis))
    kept = tuple(1 if i in axes else d for i, d in enumerate(a.shape) if keepdims or i not in axes)
    lead = () if fn.endswith("median") else np.shape(_q(q, q_dtype))
    stand_in = np.ones((1,) * ndim, a.dtype.name)
    with np.errstate(all="ignore"):
        dtype = _quantile_call(np, stand_in, fn, q, q_dtype, axis, keepdims, method).dtype
    return Meta(tuple(lead) + kept, convert_dtype(dtype.name))


NP_QUANTILE = register(
    "np_quantile", kernel=_quantile_kernel, infer=_quantile_infer, nondiff=True, amp="keep",
    doc="NumPy's percentile / quantile / median (and nan* forms) of a, with NumPy's dtype.")


def _linalg_call(a, b, fn, options):
    f = getattr(np.linalg, fn)
    out = f(a, b, **dict(options)) if fn == "solve" else f(a, **dict(options))
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else (np.asarray(out),)


def _linalg_kernel(xp, a, b=None, fn="inv", options=()):
    try:
        out = _linalg_call(to_numpy(a), None if b is None else to_numpy(b), fn, options)
    except Exception as e:  # (NumPy's own error, as eager code gets it: `Singular matrix`)
        raise as_eager(e) from None
    out = tuple(xp.asarray(o) for o in out)  # (NumPy's, on the host)
    return out if len(out) > 1 else out[0]


def _square(fn: str, shape) -> None:
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"{len(shape)}-dimensional array given. Array must be at "
                                    "least two-dimensional")
    if -1 not in shape[-2:] and shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def _k(m: int, n: int) -> int:
    return -1 if -1 in (m, n) else min(m, n)


def _linalg_shapes(fn: str, a: tuple, b: tuple | None, opts: dict) -> list:
    if fn in ("eigh", "eigvalsh", "inv", "det", "solve"):
        _square(fn, a)
    if fn == "eigh":
        return [a[:-1], a]
    if fn == "eigvalsh":
        return [a[:-1]]
    if fn == "inv":
        return [a]
    if fn == "det":
        return [a[:-2]]
    if fn == "solve":
        if len(b) == 1:
            return [a[:-1]]
        return [I.broadcast_shapes("solve", a[:-2], b[:-2], ("a", "b")) + tuple(b[-2:])]
    if fn == "svd":
        m, n, k = a[-2], a[-1], _k(a[-2], a[-1])
        s = a[:-2] + (k,)
        if not opts.get("compute_uv", True):
            return [s]
        full = opts.get("full_matrices", True)
        return [a[:-2] + (m, m if full else k), s, a[:-2] + ((n if full else k), n)]
    return [_norm_shape(a, opts)]


def _norm_shape(a: tuple, opts: dict) -> tuple:
    axis, keep = opts.get("axis"), opts.get("keepdims", False)
    if axis is None:
        return (1,) * len(a) if keep else ()
    axes = {I.norm_axis("norm", k, len(a)) for k in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(1 if i in axes else d for i, d in enumerate(a) if keep or i not in axes)


def _linalg_infer(a, b=None, fn="inv", options=()):
    I.check_tensor(fn, "a", a)
    stand_a = np.ones((1,) * len(a.shape), a.dtype.name)
    stand_b = None if b is None else np.ones((1,) * len(b.shape), b.dtype.name)
    with np.errstate(all="ignore"):
        dtypes = [o.dtype for o in _linalg_call(stand_a, stand_b, fn, options)]
    shapes = _linalg_shapes(fn, tuple(a.shape), None if b is None else tuple(b.shape),
                            dict(options))
    if len(shapes) != len(dtypes):
        raise OpError(f"np.linalg.{fn}: {len(dtypes)} results but {len(shapes)} shapes")
    metas = [Meta(tuple(s), convert_dtype(d.name)) for s, d in zip(shapes, dtypes)]
    return tuple(metas) if len(metas) > 1 else metas[0]


NP_LINALG = register(
    "np_linalg", kernel=_linalg_kernel, infer=_linalg_infer, nondiff=True, amp="keep",
    doc="NumPy's np.linalg function `fn` (eigh, eigvalsh, inv, det, solve, svd, norm) with "
        "NumPy's results and dtypes.")
