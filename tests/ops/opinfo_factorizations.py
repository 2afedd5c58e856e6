"""OpInfos for runtime/ops/factorizations.py (det, slogdet, solve, cholesky) and
runtime/ops/matrix_products.py (mm, mv, multi_dot, matrix_power, cross)."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime as rt
from runtime.ops.registry import OpError, OpTypeError


def _well_conditioned(rng, *shape):
    """Square matrices away from singular: a random matrix plus 3 on the diagonal."""
    return randn(rng, *shape) * 0.5 + 3.0 * np.eye(shape[-1])


def _spd(rng, *shape):
    a = randn(rng, *shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _square_samples(rng):
    neg = _well_conditioned(rng, 3, 3)
    neg[0] *= -1.0  # a negative determinant
    return [Sample((_well_conditioned(rng, 3, 3),)), Sample((neg,)),
            Sample((_well_conditioned(rng, 2, 4, 4),)), Sample((_well_conditioned(rng, 1, 1),))]


def _solve_samples(rng):
    return [Sample((_well_conditioned(rng, 3, 3), randn(rng, 3, 2))),
            Sample((_well_conditioned(rng, 3, 3), randn(rng, 3))),
            Sample((_well_conditioned(rng, 2, 3, 3), randn(rng, 2, 3, 1))),
            Sample((_well_conditioned(rng, 3, 3), randn(rng, 4, 3, 2))),
            Sample((_well_conditioned(rng, 3, 3), randn(rng, 2, 3)), {"left": False})]


def _solve_ref(x, y, left=True):
    if not left:
        return np.swapaxes(np.linalg.solve(np.swapaxes(x, -1, -2), np.swapaxes(y, -1, -2)),
                           -1, -2)
    if y.ndim == 1:
        return np.linalg.solve(x, y[:, None])[:, 0]
    return np.linalg.solve(x, y)


def _symmetric(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def _cholesky_fn(x, upper=False):
    """cholesky of x's symmetric part (what a covariance estimate gives): finite differences
    then see the same function of every entry as the gradient describes."""
    n = len(x.shape)
    return rt.linalg.cholesky((x + rt.transpose(x, [*range(n - 2), n - 1, n - 2])) / 2,
                              upper=upper)


def _cholesky_ref(x, upper=False):
    low = np.linalg.cholesky(_symmetric(x))
    return np.swapaxes(low, -1, -2) if upper else low


def _cholesky_samples(rng):
    return [Sample((_spd(rng, 3, 3),)), Sample((_spd(rng, 2, 4, 4),)),
            Sample((_spd(rng, 3, 3),), {"upper": True})]


def _power_samples(rng):
    a = _well_conditioned(rng, 3, 3) / 3.0
    return [Sample((a, 1)), Sample((a, 2)), Sample((a, 5)), Sample((a, 0)), Sample((a, -2)),
            Sample((_well_conditioned(rng, 2, 2, 2) / 3.0, 3))]


def _cross_samples(rng):
    return [Sample((randn(rng, 3), randn(rng, 3))), Sample((randn(rng, 4, 3), randn(rng, 4, 3))),
            Sample((randn(rng, 3, 5), randn(rng, 3, 5)), {"axis": 0}),
            Sample((randn(rng, 2, 3, 3), randn(rng, 2, 3, 3)), {"axis": -1})]


def _cross_ref(x, y, axis=9):
    if axis == 9:
        axis = next(i for i, d in enumerate(x.shape) if d == 3)
    return np.cross(x, y, axis=axis)


def _multi_dot_samples(rng):
    return [Sample((randn(rng, 2, 3), randn(rng, 3, 4))),
            Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 4, 2), randn(rng, 2)))]


OPINFOS = [
    OpInfo("det", rt.linalg.det, np.linalg.det, _square_samples, grad_tol=1e-5, error_samples=[
        ErrorSample((np.ones((2, 3)),), {}, OpError,
                    r"det: x has shape \[2, 3\]; it must be a \(batch of\) square matrices"),
        ErrorSample((np.ones((2, 2), np.int64),), {}, OpTypeError,
                    r"det: x has dtype int64; det needs a floating-point tensor")]),
    OpInfo("slogdet", rt.linalg.slogdet, lambda x: np.stack(np.linalg.slogdet(x)),
           _square_samples, grad_tol=1e-5),
    OpInfo("solve", rt.linalg.solve, _solve_ref, _solve_samples, grad_tol=1e-5, error_samples=[
        ErrorSample((np.eye(3), np.ones((2, 1))), {}, OpError,
                    r"solve: x has shape \[3, 3\] but y has shape \[2, 1\]; y needs 3 rows"),
        ErrorSample((np.zeros((2, 2)), np.ones((2, 1))), {}, OpError,
                    r"solve: x \(shape \[2, 2\]\) Singular matrix")]),
    OpInfo("cholesky", _cholesky_fn, _cholesky_ref, _cholesky_samples, grad_tol=1e-5,
           error_samples=[ErrorSample((-np.eye(2),), {}, OpError,
                                      r"cholesky: x \(shape \[2, 2\]\) Matrix is not positive "
                                      r"definite")]),
    OpInfo("mm", rt.mm, np.matmul, lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 3, 4)))]),
    OpInfo("mv", rt.mv, np.matmul, lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 3)))],
           error_samples=[ErrorSample((np.ones((2, 3, 3)), np.ones(3)), {}, OpError,
                                      r"mv: x has shape \[2, 3, 3\] and vec \[3\]")]),
    OpInfo("multi_dot", lambda *xs: rt.linalg.multi_dot(xs),
           lambda *xs: np.linalg.multi_dot(xs), _multi_dot_samples, error_samples=[
               ErrorSample((np.ones((2, 2)), np.ones(2), np.ones((2, 2))), {}, OpError,
                           r"multi_dot: x\[1\] has shape \[2\]; the first and last may be 1-D")]),
    OpInfo("matrix_power", rt.linalg.matrix_power, np.linalg.matrix_power, _power_samples,
           grad_tol=1e-5),
    OpInfo("cross", rt.cross, _cross_ref, _cross_samples, error_samples=[
        ErrorSample((np.ones((2, 4)), np.ones((2, 4))), {}, OpError,
                    r"cross: x has shape \[2, 4\]; no axis has size 3")]),
]
