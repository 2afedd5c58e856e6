"""Reductions: sum, mean, max, min, prod, argmax, argmin, all, any, logsumexp, cumsum, and
std, var, norm, amax / amin (Paddle's names for max / min with ties sharing the gradient)
and count_nonzero composed from them.

All take `axis=None` (every axis), an int or a list of ints, and `keepdim=False`. Reducing to
a scalar gives a real 0-d tensor (shape `[]`). Gradients flow back through one helper op,
`unreduce`, which broadcasts a reduced gradient to the input's shape (divided by the count for
`mean`), so static programs with unknown dims need no shape arithmetic.

Ties in `max`/`min`: the gradient is split evenly among the tied elements (it still sums to
the output gradient, like `torch.amax`; Paddle gives each tied element the full gradient).
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from . import infer as I
from .elementwise import is_float_array, named_after
from .math import abs as _abs
from .math import cast, exp, scale, sqrt
from .math import pow as _pow
from .registry import Meta, OpError, OpTypeError, bind, register
from .shape import flatten


def _axes(x, axis):
    """Attr axis (None or a list) as a NumPy axis argument for array x. An axis out of range
    raises here, and `bind` then reports the infer rule's precise error."""
    if axis is None:
        return None
    n = x.ndim
    for a in axis:
        if not -builtins.max(n, 1) <= a < builtins.max(n, 1):
            raise IndexError(a)
    return tuple(a % n for a in axis) if n else None


def _attrs(op, axis, keepdim, **extra) -> dict:
    """Normalise Paddle's axis spellings (None, int, list, tuple, []) into plain attrs."""
    if axis is not None:
        if isinstance(axis, (int, np.integer)):
            axis = [int(axis)]
        elif isinstance(axis, (list, tuple)) and builtins.all(
                isinstance(a, (int, np.integer)) for a in axis):
            axis = [int(a) for a in axis] or None  # Paddle: an empty list reduces every axis
        else:
            raise OpTypeError(f"{op}: axis must be an int, a list of ints or None, "
                              f"got {axis!r}")
    attrs = {"axis": axis, "keepdim": bool(keepdim)}
    attrs.update({k: v for k, v in extra.items() if v is not None})
    return attrs


# ---- the gradient helper ---------------------------------------------------------------------

def _unreduce_kernel(xp, g, x, axis=None, keepdim=False, mean=False):
    axes = _axes(x, axis)
    if axes is None:
        axes = tuple(range(x.ndim))
    if not keepdim:
        g = xp.expand_dims(g, axes) if axes else g
    if mean:  # (divided before broadcasting: a stride-0 view, as sum's, that fused C reads
        # as one element, `runtime/program/native_run.py`; the same quotient per element)
        count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
        g = (g / count).astype(g.dtype, copy=False)
    return xp.broadcast_to(g, x.shape)


def _unreduce_grad(ins, outs, gs, a):
    fn = mean if a.get("mean") else sum
    return [fn(gs[0], a.get("axis"), keepdim=a.get("keepdim", False)), None]


UNREDUCE = register(
    "unreduce", kernel=_unreduce_kernel, infer=lambda g, x, **a: Meta(x.shape, g.dtype),
    grad=_unreduce_grad,
    doc="Broadcast the gradient of a reduction of x back to x's shape (mean: divide by the "
        "number of reduced elements).")


def unreduce(g, x, axis=None, keepdim=False, mean=False):
    attrs = {"axis": axis, "keepdim": keepdim}
    if mean:
        attrs["mean"] = True
    return bind(UNREDUCE, (g, x), attrs)


def _back(g, ins, a, mean=False):
    return unreduce(g, ins[0], a.get("axis"), a.get("keepdim", False), mean)


# ---- reductions ------------------------------------------------------------------------------

def _sum_dtype(dt):
    """Paddle sums bool and int32 into int64; other types keep theirs."""
    return dtypes.int64 if dt in (dtypes.bool_, dtypes.int32) else dt


def _sum_infer(x, axis=None, keepdim=False, dtype=None, op="sum"):
    m = I.reduce(op)(x, axis, keepdim)
    return Meta(m.shape, dtypes.convert_dtype(dtype) if dtype else _sum_dtype(x.dtype))


def _sum_kernel(xp, x, axis=None, keepdim=False, dtype=None):
    dt = dtypes.convert_dtype(dtype).np if dtype else _sum_dtype(dtypes.of_array(x)).np
    return xp.sum(x, axis=_axes(x, axis), keepdims=keepdim, dtype=dt)


def _extreme_grad(ins, outs, gs, a):
    """Split the gradient evenly among the elements equal to the max (min)."""
    x = ins[0]
    hit = cast(x == _back(outs[0], ins, a), gs[0].dtype)
    count = sum(hit, a.get("axis"), keepdim=a.get("keepdim", False))
    return [_back(gs[0] / count, ins, a) * hit]


def _logsumexp_kernel(xp, x, axis=None, keepdim=False):
    x = x if is_float_array(x) else x.astype(np.float32)
    axes = _axes(x, axis)
    m = xp.max(x, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # all -inf rows stay -inf instead of becoming nan
    out = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, axis=axes)


def _arg_kernel(fn):
    def kernel(xp, x, axis=None, keepdim=False, dtype="int64"):
        np_dt = dtypes.convert_dtype(dtype).np
        if axis is not None and len(axis) != 1:
            raise ValueError(axis)  # bind then reports the infer rule's message
        if axis is None:
            out = xp.asarray(fn(x.reshape(-1))).astype(np_dt)
            return out.reshape((1,) * x.ndim) if keepdim else out
        return fn(x, axis=_axes(x, axis)[0] if x.ndim else None,
                  keepdims=keepdim).astype(np_dt)
    return kernel


def _arg_infer(op):
    def rule(x, axis=None, keepdim=False, dtype="int64"):
        if axis is not None and len(axis) != 1:
            raise OpError(f"{op}: axis must be None or one int, got {axis}")
        m = I.reduce(op, allow_bool=False)(x, axis, keepdim)
        if axis is None and keepdim:
            m = Meta((1,) * len(x.shape), m.dtype)
        dt = dtypes.convert_dtype(dtype)
        if dt not in (dtypes.int32, dtypes.int64):
            raise OpError(f"{op}: dtype must be int32 or int64, got {dt.name}")
        return Meta(m.shape, dt)
    return rule


# sum and mean stay float32 under auto_cast (Paddle's black list): low-precision accumulation
SUM = register("sum", kernel=_sum_kernel, infer=_sum_infer, amp="black",
               grad=lambda ins, outs, gs, a: [_back(gs[0], ins, a)])
MEAN = register("mean", kernel=lambda xp, x, axis=None, keepdim=False: xp.mean(
    x, axis=_axes(x, axis), keepdims=keepdim, dtype=None if is_float_array(x) else np.float32),
    infer=I.reduce("mean", float_only=True), amp="black",
    grad=lambda ins, outs, gs, a: [_back(gs[0], ins, a, mean=True)])
MAX = register("max", kernel=lambda xp, x, axis=None, keepdim=False: xp.max(
    x, axis=_axes(x, axis), keepdims=keepdim), infer=I.reduce("max"), grad=_extreme_grad)
MIN = register("min", kernel=lambda xp, x, axis=None, keepdim=False: xp.min(
    x, axis=_axes(x, axis), keepdims=keepdim), infer=I.reduce("min"), grad=_extreme_grad)
PROD = register("prod", kernel=lambda xp, x, axis=None, keepdim=False: xp.prod(
    x, axis=_axes(x, axis), keepdims=keepdim, dtype=_sum_dtype(dtypes.of_array(x)).np),
    infer=lambda x, axis=None, keepdim=False: _sum_infer(x, axis, keepdim, op="prod"),
    # Paddle's rule: d prod / dx = prod / x (inputs containing 0 give nan, as in Paddle)
    grad=lambda ins, outs, gs, a: [_back(gs[0] * outs[0], ins, a) / ins[0]])
LOGSUMEXP = register("logsumexp", kernel=_logsumexp_kernel,
                     infer=I.reduce("logsumexp", float_only=True), amp="black",
                     grad=lambda ins, outs, gs, a: [
                         _back(gs[0], ins, a) * exp(ins[0] - _back(outs[0], ins, a))])
ARGMAX = register("argmax", kernel=_arg_kernel(np.argmax), infer=_arg_infer("argmax"),
                  nondiff=True, amp="keep")
ARGMIN = register("argmin", kernel=_arg_kernel(np.argmin), infer=_arg_infer("argmin"),
                  nondiff=True, amp="keep")
ALL = register("all", kernel=lambda xp, x, axis=None, keepdim=False: xp.all(
    x, axis=_axes(x, axis), keepdims=keepdim), infer=I.reduce("all", out_dtype=dtypes.bool_),
    nondiff=True, amp="keep")
ANY = register("any", kernel=lambda xp, x, axis=None, keepdim=False: xp.any(
    x, axis=_axes(x, axis), keepdims=keepdim), infer=I.reduce("any", out_dtype=dtypes.bool_),
    nondiff=True, amp="keep")


def _cumsum_infer(x, axis, dtype=None):
    I.check_tensor("cumsum", "x", x)
    I.norm_axis("cumsum", axis, len(x.shape))
    return Meta(x.shape, dtypes.convert_dtype(dtype) if dtype else _sum_dtype(x.dtype))


def _cumsum_kernel(xp, x, axis, dtype=None):
    dt = dtypes.convert_dtype(dtype).np if dtype else _sum_dtype(dtypes.of_array(x)).np
    if not x.ndim:
        return x.astype(dt)
    return xp.cumsum(x, axis=_axes(x, [axis])[0], dtype=dt)


def _cumsum_grad(ins, outs, gs, a):
    # the reverse cumulative sum: total - cumsum(g) + g
    g, axis = gs[0], a["axis"]
    return [sum(g, axis, keepdim=True) - cumsum(g, axis) + g]


CUMSUM = register("cumsum", kernel=_cumsum_kernel, infer=_cumsum_infer, grad=_cumsum_grad)


# ---- public functions ------------------------------------------------------------------------

def sum(x, axis=None, dtype=None, keepdim=False, name=None):
    """Sum over `axis` (None: all). bool and int32 inputs sum into int64, as in Paddle.

    >>> import runtime as rt
    >>> rt.sum(rt.to_tensor([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()
    [4.0, 6.0]
    """
    dtype = dtypes.convert_dtype(dtype).name if dtype is not None else None
    return bind(SUM, (x,), _attrs("sum", axis, keepdim, dtype=dtype))


def mean(x, axis=None, keepdim=False, name=None):
    """Arithmetic mean over `axis` (integer inputs give float32).

    >>> import runtime as rt
    >>> rt.mean(rt.to_tensor([1.0, 2.0])).item()
    1.5
    """
    return bind(MEAN, (x,), _attrs("mean", axis, keepdim))


def _reduction(op, doc):
    @named_after(op, doc)
    def fn(x, axis=None, keepdim=False, name=None):
        return bind(op, (x,), _attrs(op.name, axis, keepdim))
    return fn


max = _reduction(MAX, "Maximum over `axis`; ties share the gradient evenly.")
min = _reduction(MIN, "Minimum over `axis`; ties share the gradient evenly.")
all = _reduction(ALL, "True where every element along `axis` is nonzero (a bool tensor).")
any = _reduction(ANY, "True where some element along `axis` is nonzero (a bool tensor).")
logsumexp = _reduction(LOGSUMEXP, "log(sum(exp(x))) over `axis`, computed stably.")


def amax(x, axis=None, keepdim=False, name=None):
    """Maximum over `axis` (Paddle's `amax`): ties share the gradient evenly, which is what
    `max` does here too.

    >>> import runtime as rt
    >>> rt.amax(rt.to_tensor([[1.0, 3.0], [3.0, 2.0]]), axis=1).tolist()
    [3.0, 3.0]
    """
    return max(x, axis, keepdim)


def amin(x, axis=None, keepdim=False, name=None):
    """Minimum over `axis` (Paddle's `amin`): ties share the gradient evenly (as `min`)."""
    return min(x, axis, keepdim)


def count_nonzero(x, axis=None, keepdim=False, name=None):
    """How many elements along `axis` are nonzero, as int64 (no gradient).

    >>> import runtime as rt
    >>> rt.count_nonzero(rt.to_tensor([[0.0, 1.5], [2.0, 3.0]]), axis=1).tolist()
    [1, 2]
    """
    return sum(cast(x != 0, "int64") if x.dtype != "bool" else cast(x, "int64"), axis,
               keepdim=keepdim)


def prod(x, axis=None, keepdim=False, dtype=None, name=None):
    """Product over `axis` (bool and int32 multiply into int64)."""
    out = bind(PROD, (x,), _attrs("prod", axis, keepdim))
    return cast(out, dtype) if dtype is not None else out


def _arg(op):
    @named_after(op, f"Index of the {op.name[3:]}imum along `axis` (None: of the flattened "
                     "tensor, a 0-d result). The first occurrence wins on ties.")
    def fn(x, axis=None, keepdim=False, dtype="int64", name=None):
        dtype = dtypes.convert_dtype(dtype).name
        return bind(op, (x,), _attrs(op.name, axis, keepdim, dtype=dtype))
    return fn


argmax = _arg(ARGMAX)
argmin = _arg(ARGMIN)


def cumsum(x, axis=None, dtype=None, name=None):
    """Cumulative sum along `axis` (None: over the flattened tensor).

    >>> import runtime as rt
    >>> rt.cumsum(rt.to_tensor([1, 2, 3])).tolist()
    [1, 3, 6]
    """
    if axis is None:
        x, axis = flatten(x), 0
    attrs = {"axis": int(axis)}
    if dtype is not None:
        attrs["dtype"] = dtypes.convert_dtype(dtype).name
    return bind(CUMSUM, (x,), attrs)


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    """Variance over `axis`, divided by n - 1 (`unbiased`) or n.

    >>> import runtime as rt
    >>> rt.var(rt.to_tensor([1.0, 2.0, 3.0])).item()
    1.0
    """
    if not x.dtype.is_floating:
        x = cast(x, "float32")
    d = x - mean(x, axis, keepdim=True)
    # the count as a tensor, so that unknown (-1) static dims work too
    count = sum(scale(x, 0.0, 1.0), axis, keepdim=keepdim)
    return sum(d * d, axis, keepdim=keepdim) / (count - 1.0 if unbiased else count)


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    """Standard deviation over `axis` (see `var`)."""
    return sqrt(var(x, axis, unbiased, keepdim))


def norm(x, p="fro", axis=None, keepdim=False, name=None):
    """Vector norm over `axis` (None: all elements): p = 'fro' or 2, 1, inf, -inf or any
    positive number.

    >>> import runtime as rt
    >>> rt.norm(rt.to_tensor([3.0, 4.0])).item()
    5.0
    """
    from ..core import is_variable
    if is_variable(p):  # (`float(t)` in converted code: a run-time p)
        return _norm_computed(x, p, axis, keepdim)
    if p in ("fro", 2, 2.0):
        return sqrt(sum(x * x, axis, keepdim=keepdim))
    if p in (1, 1.0):
        return sum(_abs(x), axis, keepdim=keepdim)
    if p == float("inf"):
        return max(_abs(x), axis, keepdim=keepdim)
    if p == float("-inf"):
        return min(_abs(x), axis, keepdim=keepdim)
    if isinstance(p, (int, float)) and p > 0:
        return _pow(sum(_pow(_abs(x), float(p)), axis, keepdim=keepdim), 1.0 / p)
    raise OpError(f"norm: p={p!r} is not supported; use 'fro', a positive number, inf or -inf")


def _norm_computed(x, p, axis, keepdim):
    """`norm` for a p the program computes: inf / -inf pick max / min of |x|, any other p
    the p-th root of the sum of |x|**p; eager's check (p > 0 or an infinity) runs with the
    program (eager's OpError)."""
    from .logic import logical_or, where
    from .number_checks import checked
    inf = float("inf")
    p = checked(p, logical_or(p > 0, p == -inf),
                "norm: p={} is not supported; use 'fro', a positive number, inf or -inf")
    a = _abs(x)
    finite = cast(where(logical_or(p == inf, p == -inf), 1.0, cast(p, "float64")), x.dtype)
    out = _pow(sum(_pow(a, finite), axis, keepdim=keepdim), 1.0 / finite)
    out = where(p == inf, max(a, axis, keepdim=keepdim), out)
    return where(p == -inf, min(a, axis, keepdim=keepdim), out)


METHODS = {
    "sum": sum, "mean": mean, "max": max, "min": min, "prod": prod, "argmax": argmax,
    "argmin": argmin, "all": all, "any": any, "logsumexp": logsumexp, "cumsum": cumsum,
    "var": var, "std": std, "norm": norm, "amax": amax, "amin": amin,
    "count_nonzero": count_nonzero,
}

__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumsum",
           "logsumexp", "max", "mean", "min", "norm", "prod", "std", "sum", "var"]
