"""NumPy's `np.unique`, `np.percentile` / `np.quantile` / `np.median` (and nan* forms),
`np.diag`, `np.zeros_like` / `ones_like` / `full_like` and `np.linalg` functions (eigh, eigvalsh, inv, det, solve, svd, norm) of a NumPy
value the program computes (`numpy_functions`' table, `FUNCTIONS`).

Each is an op whose kernel is NumPy's own function (`runtime/ops/numpy_calls.py`,
`counting`'s `unique`), so the run gives eager's arrays and dtypes (float64 where NumPy
promotes); `np.unique`'s length is decided by the values: -1 in the program, the run's own.

>>> import numpy as np
>>> import runtime as rt
>>> with rt.static.program_guard(rt.static.Program()):
...     a = rt.static.data('a', [-1], 'int64').numpy()
...     ids, counts = np.unique(a, return_counts=True)
...     mid = np.median(a)
>>> list(ids.shape), counts.dtype.name, mid.dtype.name, mid.numpy_scalar
([-1], 'int64', 'float64', True)
"""
from __future__ import annotations

import numpy as np

from ..core import is_variable
from ..ops.counting import UNIQUE
from ..ops.creation import full_like
from ..ops.matrix import diag
from ..ops.numpy_calls import NP_LINALG, NP_QUANTILE
from ..ops.registry import bind
from ..ops.shape import reshape_as
from .numpy_values import mark

_ADVICE = ("Keep it a tensor: compute it with rt's function before `.numpy()`, or do it in "
           "NumPy on the value the converted function returns.")


def _refuse(call: str, why: str):
    raise TypeError(f"{call} of a NumPy array computed by the converted code: {why}. {_ADVICE}")


def _number(v, what: str, call: str):
    if is_variable(v):
        _refuse(call, f"{what} computed by the converted code (the program takes it as a "
                      "number fixed when it is built)")
    return v


def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    """NumPy's sorted distinct values (a length the run decides) and, on request, the first
    index, the inverse (shaped as `ar` when axis is None, NumPy 2's) and the counts."""
    if not equal_nan or not sorted:
        _refuse("np.unique(equal_nan=False / sorted=False)",
                "the program gives NumPy's default, sorted values with NaNs merged")
    attrs = {"dtype": "int64"}
    if axis is not None:
        attrs["axis"] = int(_number(axis, "an axis", "np.unique()"))
    values, index, inverse, counts = bind(UNIQUE, (ar,), attrs)
    if axis is None and len(ar.shape) != 1:
        inverse = reshape_as(inverse, ar)
    extra = [t for t, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    out = [mark(t, False) for t in (values, *extra)]
    return tuple(out) if extra else out[0]


def _quantiles(fn: str):
    def call(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
        if weights is not None:
            _refuse(f"np.{fn}(weights=)", "the program takes no weights")
        q = _number(q, "q", f"np.{fn}()")
        q_dtype = None if isinstance(q, (int, float)) else np.asarray(q).dtype.name
        return _quantile(fn, a, axis, out, keepdims, q=q if q_dtype is None else np.asarray(
            q).tolist(), q_dtype=q_dtype, method=interpolation or method)
    return call


def _medians(fn: str):
    def call(a, axis=None, out=None, overwrite_input=False, keepdims=False):
        return _quantile(fn, a, axis, out, keepdims)
    return call


def _quantile(fn: str, a, axis, out, keepdims, **attrs):
    if out is not None:
        _refuse(f"np.{fn}(out=)", "the program makes a new array; assign the result")
    axis = _number(axis, "an axis", f"np.{fn}()")
    attrs.update(fn=fn, keepdims=bool(keepdims),
                 axis=tuple(axis) if isinstance(axis, (list, tuple)) else axis)
    return mark(bind(NP_QUANTILE, (ar_of(a),), attrs))


def ar_of(a):
    return a if is_variable(a) else np.asarray(a)


def _linalg(fn: str, *names: str):
    """np.linalg.<fn>(a[, b], **options): the names are its options, in NumPy's order."""
    def call(a, *args, **kwargs):
        b = None
        if fn == "solve":
            (b, *args) = args or (kwargs.pop("b"),)
            b = ar_of(b)
        options = dict(zip(names, args))
        options.update(kwargs)
        for k, v in options.items():
            _number(v, k, f"np.linalg.{fn}()")
            if isinstance(v, list):
                options[k] = tuple(v)
        results = bind(NP_LINALG, (ar_of(a),) if b is None else (ar_of(a), b),
                       {"fn": fn, "options": tuple(sorted(options.items()))})
        if not isinstance(results, (tuple, list)):
            return mark(results)
        got = tuple(mark(r) for r in results)
        return _RESULTS[fn](*got) if fn in _RESULTS else got
    return call


# np.linalg's named tuples (`_, vecs = np.linalg.eigh(a)` and `np.linalg.eigh(a).eigenvectors`)
_RESULTS = {"eigh": type(np.linalg.eigh(np.eye(1))), "svd": type(np.linalg.svd(np.eye(1)))}


def _diag(v, k=0):
    if len(v.shape) not in (1, 2):
        raise ValueError("Input must be 1- or 2-d.")
    return mark(diag(v, offset=int(_number(k, "k", "np.diag()"))), False)


def _like(name: str, fill):
    """np.zeros_like / ones_like / full_like: `a`'s shape, its dtype unless one is given."""
    def call(a, *args, dtype=None, order="K", subok=True, shape=None, **more):
        value, args = (args[0], args[1:]) if fill is None else (fill, args)
        dtype = args[0] if args else dtype
        if shape is not None:
            _refuse(f"np.{name}(shape=)", "the program keeps the array's shape")
        value = _number(value, "a fill value", f"np.{name}()")
        dtype = np.dtype(dtype if dtype is not None else a.dtype.name)
        return mark(full_like(a, np.asarray(value).astype(dtype).item(), dtype=dtype.name),
                    False)
    return call


FUNCTIONS = {
    "unique": _unique, "diag": _diag, "zeros_like": _like("zeros_like", 0),
    "ones_like": _like("ones_like", 1), "full_like": _like("full_like", None),
    **{fn: _quantiles(fn) for fn in ("percentile", "quantile", "nanpercentile", "nanquantile")},
    **{fn: _medians(fn) for fn in ("median", "nanmedian")},
    "linalg.eigh": _linalg("eigh", "UPLO"), "linalg.eigvalsh": _linalg("eigvalsh", "UPLO"),
    "linalg.inv": _linalg("inv"), "linalg.det": _linalg("det"),
    "linalg.solve": _linalg("solve"),
    "linalg.svd": _linalg("svd", "full_matrices", "compute_uv", "hermitian"),
    "linalg.norm": _linalg("norm", "ord", "axis", "keepdims"),
}
