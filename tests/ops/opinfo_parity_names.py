"""OpInfos for Paddle names that ported scripts call (session 24's probe): `diagonal` /
`trace`, `amax` / `amin` / `count_nonzero`, `nansum` / `nanmean` / `nan_to_num`, `inner`,
`lerp`, `diff`, `repeat_interleave`, `index_add`, `logcumsumexp`, `cummax` / `cummin`,
`histogram`, `vander`."""
from __future__ import annotations

import numpy as np
from opinfo import EXEMPT, ErrorSample, OpInfo, Sample, binary_samples, randn

import runtime as rt
from runtime.ops import diagonals as D
from runtime.ops.registry import OpError, OpTypeError, bind


def _diagonal_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"offset": 1}),
            Sample((randn(rng, 4, 3),), {"offset": -2}),
            Sample((randn(rng, 2, 3, 4),), {"axis1": 1, "axis2": 2}),
            Sample((randn(rng, 2, 3, 4),), {"offset": -1, "axis1": 2, "axis2": 0}),
            Sample((randn(rng, 2, 3, 4),), {"axis1": -1, "axis2": -3}),
            Sample((randn(rng, 2, 3),), {"offset": 5})]


def _diagonal_grad_samples(rng):
    return [Sample((randn(rng, 3), randn(rng, 3, 4))),
            Sample((randn(rng, 3, 2), randn(rng, 2, 3, 4)),
                   {"offset": -1, "axis1": 2, "axis2": 0})]


def _diagonal_grad_ref(g, x, offset=0, axis1=0, axis2=1):
    out = np.zeros(x.shape, g.dtype)
    n = g.shape[-1]
    rows, cols = np.arange(n) + max(-offset, 0), np.arange(n) + max(offset, 0)
    np.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, cols] = g
    return out


def _reduce_samples(rng):
    x = rng.permutation(24).reshape(2, 3, 4) * 0.5 - 5.0  # no ties: a smooth max
    return [Sample((x,)), Sample((x,), {"axis": 1}), Sample((x,), {"axis": [0, 2],
                                                                  "keepdim": True}),
            Sample((x,), {"axis": -1, "keepdim": True})]


def _tied_samples(rng):
    """Pairs of ties: they share the gradient evenly (Paddle's amax / amin), half each, which
    is also what central differences give where two elements tie."""
    return [Sample((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]]),), {"axis": 1}),
            Sample((np.array([[1.0, 3.0, 0.0], [3.0, 2.0, -1.0]]),))]


def _count_samples(rng):
    x = rng.integers(-1, 2, (3, 4)).astype(np.float64)
    return [Sample((x,)), Sample((x,), {"axis": 0}), Sample((x,), {"axis": [0, 1],
                                                                  "keepdim": True}),
            Sample((x.astype(bool),), {"axis": 1}), Sample((x.astype(np.int32),), {"axis": -1})]


def _with_nans(rng):
    x = randn(rng, 3, 4)
    x[0, 1] = x[2, 0] = x[2, 3] = np.nan
    return x


def _nan_samples(rng):
    x = _with_nans(rng)
    return [Sample((x,)), Sample((x,), {"axis": 1}), Sample((x,), {"axis": 0, "keepdim": True})]


def _nan_to_num_samples(rng):
    x = _with_nans(rng)
    x[1, 1], x[1, 2] = np.inf, -np.inf
    # (the default replacements are the dtype's extremes: no finite differences through them)
    return [Sample((x,), grad=False), Sample((x,), {"nan": 1.5, "posinf": 9.0, "neginf": -9.0}),
            Sample((x,), {"posinf": 2.0}, grad=False)]


def _nan_to_num_ref(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _inner_samples(rng):
    return [Sample((randn(rng, 4), randn(rng, 4))), Sample((randn(rng, 2, 3), randn(rng, 3))),
            Sample((randn(rng, 2, 3), randn(rng, 4, 5, 3))), Sample((randn(rng), randn(rng, 3))),
            Sample((randn(rng, 3), 2.0))]


def _lerp_samples(rng):
    out = binary_samples(scalars=())(rng)
    return ([Sample(s.args + (0.25,)) for s in out]
            + [Sample((randn(rng, 3, 4), randn(rng, 3, 4), rng.uniform(0, 1, (4,)))),
               Sample((randn(rng, 2, 1), randn(rng, 3), rng.uniform(0, 1, (2, 3))))])


def _diff_ref(x, n=1, axis=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, axis, **kw)


def _diff_samples(rng):
    return [Sample((randn(rng, 5),)), Sample((randn(rng, 3, 4),), {"axis": 0}),
            Sample((randn(rng, 3, 4),), {"n": 2}), Sample((randn(rng, 2, 3),), {"n": 0}),
            Sample((randn(rng, 3, 4), 3, 1, randn(rng, 3, 2), randn(rng, 3, 1))),
            Sample((randn(rng, 2, 3), 1, 0, None, randn(rng, 1, 3))),
            Sample((rng.integers(0, 2, (6,)).astype(bool),), grad=False)]


def _repeat_ref(x, repeats, axis=None):
    return np.repeat(x, repeats, axis)


def _repeat_samples(rng):
    return [Sample((randn(rng, 2, 3), 2)), Sample((randn(rng, 2, 3), 3), {"axis": 1}),
            Sample((randn(rng, 2, 3, 2), 0), {"axis": -2}),
            Sample((rng.integers(0, 9, (2, 2)), 2), {"axis": 0})]


def _index_add_ref(x, index, axis, value):
    out = np.moveaxis(x.copy(), axis, 0)
    np.add.at(out, index, np.moveaxis(value, axis, 0))
    return np.moveaxis(out, 0, axis)


def _index_add_samples(rng):
    return [Sample((randn(rng, 4, 3), np.array([0, 2, 0]), 0, randn(rng, 3, 3))),
            Sample((randn(rng, 2, 5, 3), np.array([4, 1]), 1, randn(rng, 2, 2, 3))),
            Sample((randn(rng, 2, 3), np.array([2, 2, 0, 1]), -1, randn(rng, 2, 4)))]


def _logcumsumexp_ref(x, axis=None, dtype=None):
    if axis is None:
        x, axis = x.reshape(-1), 0
    if x.dtype.kind != "f":  # integers compute in float32
        x = x.astype(np.float32)
    return np.logaddexp.accumulate(x, axis=axis)


def _logcumsumexp_samples(rng):
    wide = randn(rng, 3, 5)
    wide[0] *= 300.0  # terms far apart: a plain log(cumsum(exp)) would overflow
    return [Sample((randn(rng, 6),)), Sample((randn(rng, 3, 4),), {"axis": 0}),
            Sample((wide,), {"axis": -1}, grad=False), Sample((randn(rng, 2, 3, 2),)),
            Sample((rng.integers(-3, 3, (4,)),), grad=False)]


def _running_ref(pick):
    def ref(x, axis=None, dtype="int64"):
        if axis is None:
            x, axis = x.reshape(-1), 0
        x = np.moveaxis(x, axis, 0)
        values, index = x.copy(), np.zeros(x.shape, np.int64)
        for i in range(1, x.shape[0]):
            take = pick(x[i], values[i - 1])
            values[i] = np.where(take, x[i], values[i - 1])
            index[i] = np.where(take, i, index[i - 1])
        return np.moveaxis(values, 0, axis), np.moveaxis(index, 0, axis).astype(dtype)
    return ref


def _running_samples(rng):
    x = rng.permutation(12).reshape(3, 4) * 0.5 - 3.0  # distinct: no ties in the gradient
    tied = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, -1.0, 0.0]])
    return [Sample((x,), {"axis": 1}), Sample((x,), {"axis": 0, "dtype": "int32"}),
            Sample((x,)), Sample((tied,), {"axis": 1}, grad=False)]


def _histogram_ref(x, bins=100, min=0, max=0):
    lo, hi = (x.min(), x.max()) if min == max == 0 else (min, max)
    return np.histogram(x, bins, (lo, hi))[0].astype(np.int64)


def _histogram_samples(rng):
    x = randn(rng, 50)
    return [Sample((x,), {"bins": 7}), Sample((x,), {"bins": 4, "min": -1, "max": 1}),
            Sample((x.reshape(5, 10),))]


EXEMPT["repeat_interleave_index"] = (
    "its length depends on the counts (-1 in its infer rule); repeat_interleave with tensor "
    "counts, eager vs converted vs NumPy, in tests/ops/test_parity_names.py")

OPINFOS = [
    OpInfo("diagonal", rt.diagonal, np.diagonal, _diagonal_samples, error_samples=[
        ErrorSample((np.ones(3),), {}, OpError, r"diagonal: x must have at least 2 dims, got 1"),
        ErrorSample((np.ones((2, 3)),), {"axis1": 1, "axis2": -1}, OpError,
                    r"diagonal: axis1 and axis2 are both axis 1; they must differ"),
        ErrorSample((np.ones((2, 3)),), {"axis2": 2}, OpError,
                    r"diagonal: axis2=2 is out of range for a tensor of 2 dims")]),
    OpInfo("diagonal_grad", lambda g, x, **kw: bind(D.DIAGONAL_GRAD, (g, x), {
        "offset": 0, "axis1": 0, "axis2": 1, **kw}), _diagonal_grad_ref, _diagonal_grad_samples,
        grad=(0,)),
    OpInfo("trace", rt.trace, np.trace, _diagonal_samples),
    OpInfo("amax", rt.amax, lambda x, axis=None, keepdim=False: np.amax(
        x, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdim),
        _reduce_samples),
    OpInfo("amin", lambda x, **kw: x.amin(**kw), lambda x, axis=None, keepdim=False: np.amin(
        x, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdim),
        _reduce_samples),
    OpInfo("amax (ties)", rt.amax, lambda x, axis=None: np.amax(x, axis), _tied_samples),
    OpInfo("count_nonzero", rt.count_nonzero,
           lambda x, axis=None, keepdim=False: np.count_nonzero(
               x, axis=tuple(axis) if isinstance(axis, list) else axis,
               keepdims=keepdim).astype(np.int64), _count_samples, grad=False),
    OpInfo("nansum", rt.nansum, lambda x, axis=None, keepdim=False: np.nansum(
        x, axis, keepdims=keepdim), _nan_samples),
    OpInfo("nanmean", lambda x, **kw: x.nanmean(**kw), lambda x, axis=None, keepdim=False:
           np.nanmean(x, axis, keepdims=keepdim), _nan_samples, error_samples=[
               ErrorSample((np.array([1, 2]),), {}, OpTypeError,
                           r"nanmean: x must be a floating tensor .* got int64")]),
    OpInfo("nan_to_num", rt.nan_to_num, _nan_to_num_ref, _nan_to_num_samples),
    OpInfo("inner", rt.inner, np.inner, _inner_samples, error_samples=[
        ErrorSample((np.ones((2, 3)), np.ones(4)), {}, OpError,
                    r"inner: x has shape \[2, 3\] but y has shape \[4\]; their last dims must "
                    r"be equal")]),
    OpInfo("lerp", rt.lerp, lambda x, y, w: x + w * (y - x), _lerp_samples),
    OpInfo("diff", rt.diff, _diff_ref, _diff_samples, error_samples=[
        ErrorSample((np.ones(3),), {"n": -1}, OpError,
                    r"diff: n must be a non-negative int, got -1")]),
    OpInfo("repeat_interleave", rt.repeat_interleave, _repeat_ref, _repeat_samples,
           grad=(0,), error_samples=[
               ErrorSample((np.ones(3), np.ones(3)), {}, OpTypeError,
                           r"repeat_interleave: repeats must be a 1-D int tensor, got "
                           r"float64\[3\]"),
               ErrorSample((np.ones(3), -1), {}, OpError,
                           r"repeat_interleave: repeats must be a non-negative int")]),
    OpInfo("index_add", rt.index_add, _index_add_ref, _index_add_samples, grad=(0, 3),
           error_samples=[ErrorSample((np.ones((2, 3)), np.array([[0]]), 0, np.ones((1, 3))),
                                      {}, OpError, r"index_add: index must be 1-D, got shape "
                                                   r"\[1, 1\]")]),
    OpInfo("logcumsumexp", rt.logcumsumexp, _logcumsumexp_ref, _logcumsumexp_samples,
           covers=("logcumsumexp_grad",)),
    OpInfo("cummax", rt.cummax, _running_ref(lambda new, old: new >= old), _running_samples),
    OpInfo("cummin", lambda x, **kw: x.cummin(**kw), _running_ref(lambda new, old: new <= old),
           _running_samples, error_samples=[
               ErrorSample((np.ones(3),), {"dtype": "float32"}, OpTypeError,
                           r"cummin: dtype must be int32 or int64, got float32")]),
    OpInfo("histogram", rt.histogram, _histogram_ref, _histogram_samples, grad=False,
           error_samples=[ErrorSample((np.ones(3),), {"bins": 0}, OpError,
                                      r"histogram: bins must be a positive int, got 0")]),
    OpInfo("vander", rt.vander, lambda x, n=None, increasing=False: np.vander(
        x if x.dtype.kind == "f" else x.astype(np.float32), n, increasing),
        lambda rng: [Sample((randn(rng, 4),)), Sample((np.array([0.0, 1.5, -2.0]), 5)),
                     Sample((randn(rng, 3), 2), {"increasing": True}),
                     Sample((rng.integers(-3, 3, (3,)),), grad=False)]),
]


def _kth_ref(x, k, axis=None, keepdim=False):
    axis = -1 if axis is None else axis
    index = np.take(np.argsort(x, axis=axis, kind="stable"), [k - 1], axis=axis)
    values = np.take_along_axis(x, index, axis)
    if not keepdim:
        index, values = np.squeeze(index, axis), np.squeeze(values, axis)
    return values, index.astype(np.int64)


def _kth_samples(rng):
    x = rng.permutation(24).reshape(2, 3, 4) * 0.5  # distinct values
    return [Sample((x, 2)), Sample((x, 1), {"axis": 1}), Sample((x, 4), {"keepdim": True}),
            Sample((x, 2), {"axis": 0, "keepdim": True})]


def _rot90_samples(rng):
    x = randn(rng, 2, 3, 4)
    return [Sample((x,)), Sample((x, 2)), Sample((x, 3, [1, 2])), Sample((x, -1, [2, 0])),
            Sample((x, 4))]


def _index_fill_samples(rng):
    return [Sample((randn(rng, 3, 4), np.array([0, 2]), 1, -1.5)),
            Sample((randn(rng, 3, 4), np.array([1, 1]), 0, randn(rng))),
            Sample((randn(rng, 2, 3, 2), np.array([2]), -2, 0.0))]


def _index_fill_ref(x, index, axis, value):
    out = np.moveaxis(x.copy(), axis, 0)
    out[index] = value
    return np.moveaxis(out, 0, axis)


def _take_samples(rng):
    x = randn(rng, 3, 4)
    return [Sample((x, np.array([[0, 11], [5, -1]]))), Sample((x, np.array([13, -14])),
                                                              {"mode": "wrap"}),
            Sample((x, np.array([13, -14, 2])), {"mode": "clip"}), Sample((x, np.array(3)))]


def _take_ref(x, index, mode="raise"):
    return np.take(x, index, mode=mode if mode != "raise" else "raise")


def _cdist_ref(x, y, p=2.0):
    d = np.abs(x[..., :, None, :] - y[..., None, :, :])
    if p == np.inf:
        return d.max(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


def _dist_ref(x, y, p=2):
    d = np.abs(x - y).ravel()
    if p == np.inf:
        return d.max()
    if p == -np.inf:
        return d.min()
    return (d ** p).sum() ** (1.0 / p)


OPINFOS += [
    OpInfo("kthvalue", rt.kthvalue, _kth_ref, _kth_samples, error_samples=[
        ErrorSample((np.ones((2, 3)), 4), {}, OpError,
                    r"kthvalue: k=4 must be an int in \[1, 3\]")]),
    OpInfo("rot90", rt.rot90, lambda x, k=1, axes=(0, 1): np.rot90(x, k, axes),
           _rot90_samples, error_samples=[
               ErrorSample((np.ones((2, 3)), 1, [1, 1]), {}, OpError,
                           r"rot90: axes must be two different axes")]),
    OpInfo("unflatten", rt.unflatten, lambda x, axis, shape: x.reshape(
        x.shape[:axis % x.ndim] + tuple(shape) + x.shape[axis % x.ndim + 1:]) if -1 not in shape
        else x.reshape(x.shape[:axis % x.ndim] + tuple(
            x.shape[axis % x.ndim] // -int(np.prod(shape)) if d == -1 else d for d in shape)
            + x.shape[axis % x.ndim + 1:]),
        lambda rng: [Sample((randn(rng, 2, 6, 3), 1, [2, 3])),
                     Sample((randn(rng, 2, 6), -1, [-1, 2]))]),
    OpInfo("index_fill", rt.index_fill, _index_fill_ref, _index_fill_samples, grad=(0, 3)),
    OpInfo("take", rt.take, _take_ref, _take_samples, grad=(0,)),
    OpInfo("cdist", rt.cdist, _cdist_ref, lambda rng: [
        Sample((randn(rng, 3, 2), randn(rng, 4, 2))),
        Sample((randn(rng, 2, 3, 2), randn(rng, 2, 2, 2)), {"p": 1.0}),
        Sample((randn(rng, 3, 2), randn(rng, 4, 2)), {"p": 3.0}),
        Sample((randn(rng, 3, 2), randn(rng, 4, 2)), {"p": np.inf})]),
    OpInfo("dist", rt.dist, _dist_ref, lambda rng: [
        Sample((randn(rng, 3, 4), randn(rng, 3, 4))), Sample((randn(rng, 3, 4), randn(rng, 4)),
                                                            {"p": 1}),
        Sample((randn(rng, 5), randn(rng, 5)), {"p": np.inf}),
        Sample((randn(rng, 5), randn(rng, 5)), {"p": -np.inf}),
        Sample((randn(rng, 5), randn(rng, 5)), {"p": 3})]),
    OpInfo("addmm", rt.addmm, lambda i, x, y, beta=1.0, alpha=1.0: beta * i + alpha * (x @ y),
           lambda rng: [Sample((randn(rng, 2, 4), randn(rng, 2, 3), randn(rng, 3, 4))),
                        Sample((randn(rng, 4), randn(rng, 2, 3), randn(rng, 3, 4)),
                               {"beta": 0.5, "alpha": -2.0})]),
]
