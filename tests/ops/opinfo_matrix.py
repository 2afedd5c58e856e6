"""OpInfos for runtime/ops/matrix.py, cumulative.py, order_stats.py and compositions.py:
diag, inv, linalg.norm, kron, cumprod, quantile / median, reciprocal, masked_fill, view,
meshgrid."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, positive, randn

import runtime as rt
from runtime.ops import matrix as M
from runtime.ops.registry import bind


def _diag_ref(x, offset=0, padding_value=0):
    out = np.diag(x, offset)
    if x.ndim == 1 and padding_value:
        out = np.where(np.diag(np.ones(x.shape, bool), offset), out, padding_value)
    return out


def _diag_samples(rng):
    return [Sample((randn(rng, 3),)), Sample((randn(rng, 3),), {"offset": 1}),
            Sample((randn(rng, 2),), {"offset": -2, "padding_value": 1.5}),
            Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"offset": 2}),
            Sample((randn(rng, 4, 3),), {"offset": -1})]


def _diag_grad_ref(g, x, offset=0):
    out = np.zeros(x.shape, g.dtype)
    rows, cols = np.nonzero(np.diag(np.ones(g.shape[0], bool), offset))
    keep = (rows < x.shape[0]) & (cols < x.shape[1])
    out[rows[keep], cols[keep]] = g
    return out


def _well_conditioned(rng, *shape):
    return randn(rng, *shape) + 3 * np.eye(shape[-1])


def _inv_samples(rng):
    return [Sample((_well_conditioned(rng, 3, 3),)), Sample((_well_conditioned(rng, 2, 2, 2),))]


def _norm_ref(x, p=None, axis=None, keepdim=False):
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = tuple(axis) if isinstance(axis, list) else axis
    if p == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdim).astype(x.dtype)
    return np.linalg.norm(x, ord=p, axis=axis, keepdims=keepdim)


def _distinct(rng, *shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.15).reshape(shape)


def _norm_samples(rng):
    x = _distinct(rng, 3, 4)
    return [Sample((x,)), Sample((x,), {"p": 1, "axis": 1}),
            Sample((x,), {"p": 3, "axis": 0, "keepdim": True}),
            Sample((x,), {"p": 0, "axis": 1}, grad=False),
            Sample((x,), {"axis": [0, 1]}), Sample((x,), {"p": "fro", "axis": [1, 0]}),
            Sample((x,), {"p": 1, "axis": [0, 1]}), Sample((x,), {"p": -1, "axis": [0, 1]}),
            Sample((x,), {"p": np.inf, "axis": [0, 1], "keepdim": True}),
            Sample((_distinct(rng, 2, 3, 4),), {"p": -np.inf, "axis": [2, 1]}),
            Sample((randn(rng, 3, 4),), {"p": "nuc", "axis": [0, 1]}),
            Sample((randn(rng, 2, 3, 4),), {"p": 2, "axis": [2, 0]}),
            Sample((randn(rng, 2, 3, 4),), {"p": -2, "axis": [1, 2], "keepdim": True})]


def _kron_samples(rng):
    return [Sample((randn(rng, 2, 3), randn(rng, 3, 2))), Sample((randn(rng, 3), randn(rng, 2))),
            Sample((randn(rng, 2, 2), randn(rng, 3))),
            Sample((randn(rng, 2, 1, 2), randn(rng, 2, 2)))]


def _cumprod_ref(x, dim=None, dtype=None):
    if dim is None:
        x, dim = x.reshape(-1), 0
    return np.cumprod(x.astype(dtype) if dtype else x, axis=dim)


def _cumprod_samples(rng):
    with_zero = randn(rng, 3, 4)
    with_zero[1, 2] = 0.0
    with_zero[2, 0] = 0.0
    return [Sample((randn(rng, 3, 4),), {"dim": 1}), Sample((with_zero,), {"dim": 1}),
            Sample((with_zero,), {"dim": 0}), Sample((randn(rng, 2, 3),)),
            Sample((randn(rng, 2, 3, 2),), {"dim": -2}),
            Sample((rng.integers(1, 4, (5,)).astype(np.int32),), {"dim": 0}),
            Sample((randn(rng, 4),), {"dim": 0, "dtype": "float64"})]


def _quantile_ref(x, q, axis=None, keepdim=False, interpolation="linear"):
    axis = tuple(axis) if isinstance(axis, list) else axis
    return np.quantile(x, q, axis=axis, keepdims=keepdim, method=interpolation)


def _quantile_samples(rng):
    x = _distinct(rng, 3, 5)
    return [Sample((x, 0.5)), Sample((x, 0.3), {"axis": 1}),
            Sample((x, [0.1, 0.75]), {"axis": 0, "keepdim": True}),
            Sample((x, 0.4), {"axis": -1, "interpolation": "lower"}),
            Sample((x, 0.4), {"axis": 1, "interpolation": "higher"}),
            Sample((x, 0.4), {"axis": 1, "interpolation": "midpoint"}),
            Sample((x, 0.4), {"axis": 1, "interpolation": "nearest"}),
            Sample((x, 1.0), {"keepdim": True}), Sample((_distinct(rng, 2, 4, 3), 0.5),
                                                       {"axis": 1})]


def _median_ref(x, axis=None, keepdim=False):
    out = np.median(x, axis=axis, keepdims=keepdim)
    return out.astype(np.float32) if x.dtype.kind in "iu" else out


def _median_samples(rng):
    return [Sample((_distinct(rng, 3, 4),)), Sample((_distinct(rng, 3, 5),), {"axis": 1}),
            Sample((_distinct(rng, 4, 3),), {"axis": 0, "keepdim": True}),
            Sample((rng.integers(0, 9, (2, 5)).astype(np.int64),), {"axis": 1})]


def _masked_fill_samples(rng):
    x = randn(rng, 3, 4)
    return [Sample((x, x > 0, -1.0)), Sample((x, (randn(rng, 4) > 0), 2.5)),
            Sample((x, x < 0.5, np.array(0.75))),
            Sample((rng.integers(0, 9, (3,)).astype(np.int64), np.array([True, False, True]), 7))]


def _masked_fill_ref(x, mask, value):
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)


def _meshgrid(*ts):
    return rt.meshgrid(*ts)


OPINFOS = [
    OpInfo("diag", rt.diag, _diag_ref, _diag_samples, error_samples=[
        ErrorSample((np.ones((2, 2, 2)),), {}, ValueError,
                    r"diag: x has shape \[2, 2, 2\]; diag takes a 1-D or a 2-D tensor")]),
    OpInfo("diag_grad", lambda g, x, offset=0: bind(M.DIAG_GRAD, (g, x), {"offset": offset}),
           _diag_grad_ref, lambda rng: [Sample((randn(rng, 3), randn(rng, 3, 4))),
                                        Sample((randn(rng, 2), randn(rng, 3, 4)), {"offset": 2}),
                                        Sample((randn(rng, 3), randn(rng, 4, 3)),
                                               {"offset": -1})],
           grad=(0,)),
    OpInfo("inv", rt.linalg.inv, np.linalg.inv, _inv_samples, grad_tol=1e-5, error_samples=[
        ErrorSample((np.ones((2, 3)),), {}, ValueError,
                    r"inv: x has shape \[2, 3\]; it must be a \(batch of\) square matrices"),
        ErrorSample((np.ones((2, 2)),), {}, ValueError, r"inv: x \(shape \[2, 2\]\) is singular")]),
    OpInfo("linalg_norm", rt.linalg.norm, _norm_ref, _norm_samples, error_samples=[
        ErrorSample((np.ones((2, 2)),), {"p": 3, "axis": [0, 1]}, ValueError,
                    r"linalg.norm: the matrix norm p=3 is not supported")]),
    OpInfo("svdvals", rt.linalg.svdvals, lambda x: np.linalg.svd(x, compute_uv=False),
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 4, 3),)),
                        Sample((randn(rng, 2, 2),))],
           covers=("svdvals_grad",), grad_tol=1e-5, error_samples=[
               ErrorSample((np.ones(3),), {}, ValueError,
                           r"svdvals: x is float64\[3\]; it must be a \(batch of\)")]),
    OpInfo("kron", rt.kron, np.kron, _kron_samples),
    OpInfo("cumprod", rt.cumprod, _cumprod_ref, _cumprod_samples, covers=("cumprod_grad",),
           error_samples=[ErrorSample((np.ones((2, 3)),), {"dim": 2}, ValueError,
                                      r"cumprod: dim=2 is out of range for a tensor of rank 2")]),
    OpInfo("quantile", rt.quantile, _quantile_ref, _quantile_samples, error_samples=[
        ErrorSample((np.ones(3), 1.5), {}, ValueError, r"quantile: q=1.5; every q must be in"),
        ErrorSample((np.ones(3), 0.5), {"interpolation": "cubic"}, ValueError,
                    r"quantile: interpolation='cubic'")]),
    OpInfo("median", rt.median, _median_ref, _median_samples),
    OpInfo("reciprocal", rt.reciprocal, lambda x: 1.0 / x,
           lambda rng: [Sample((positive(rng, 3, 4),)), Sample((-positive(rng, 5),))]),
    OpInfo("masked_fill", rt.masked_fill, _masked_fill_ref, _masked_fill_samples, grad=(0, 2)),
    OpInfo("view", lambda x, shape: x.view(shape), lambda x, shape: x.reshape(shape),
           lambda rng: [Sample((randn(rng, 2, 6), [3, 4])), Sample((randn(rng, 2, 6), [-1]))]),
    OpInfo("view_as", rt.view_as, lambda x, y: x.reshape(y.shape),
           lambda rng: [Sample((randn(rng, 2, 6), randn(rng, 4, 3)))], grad=(0,)),
    OpInfo("meshgrid", _meshgrid, lambda *xs: np.meshgrid(*xs, indexing="ij"),
           lambda rng: [Sample((randn(rng, 2), randn(rng, 3))),
                        Sample((randn(rng, 2), randn(rng, 1), randn(rng, 3)))]),
]
