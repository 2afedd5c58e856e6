"""`np.percentile` / `np.quantile` / `np.median` (and nan* forms) and `np.linalg` (eigh,
eigvalsh, inv, det, solve, svd, norm) of NumPy values the program computes (issue 35): robust
statistics (median / IQR clipping of activations), Laplacian eigenvector positional
encodings of a graph transformer, whitening with an inverse covariance. They raised
`TypeError: np.percentile() of a NumPy array computed by the converted code` at the line; now
they are ops whose kernel is NumPy's, with NumPy's results and dtypes (float64 where NumPy
promotes, NumPy scalars for 0-d results, np.linalg's named tuples), also for sizes only the
run knows (`InputSpec([None, ...])`). Eager vs static vs NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import INTERNAL, assert_at_user_line, shown


def _same(got, want, rtol=1e-5):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):  # (np.linalg's named tuples too)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w, rtol)
    elif isinstance(want, rt.Tensor):
        _same(got.numpy(), want.numpy(), rtol)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)
    else:
        assert got == want


# ---- robust statistics ----------------------------------------------------------------------

def robust_clip(x, k=1.5):
    """IQR clipping of activations, and the statistics a logger keeps."""
    a = (x * 1).numpy()
    q1, q3 = np.percentile(a, [25, 75])
    iqr = q3 - q1
    clipped = np.clip(a, q1 - k * iqr, q3 + k * iqr)
    stats = {"median": np.median(a), "p90": np.percentile(a, 90),
             "col_median": np.median(a, axis=0), "q": np.quantile(a, [0.1, 0.9], axis=1),
             "row_mid": np.median(a, axis=-1, keepdims=True),
             "nan_med": np.nanmedian(np.where(a > q3, np.nan, a)),
             "lower": np.percentile(a, 50, method="lower"), "zeros": np.zeros_like(a),
             "halves": np.full_like(a, 2.5, dtype="float64"), "fill": np.full_like(a, 2.5)}
    return rt.to_tensor(clipped), stats, float(iqr)


def _robust_reference(a, k=1.5):
    q1, q3 = np.percentile(a, [25, 75])
    iqr = q3 - q1
    stats = {"median": np.median(a), "p90": np.percentile(a, 90),
             "col_median": np.median(a, axis=0), "q": np.quantile(a, [0.1, 0.9], axis=1),
             "row_mid": np.median(a, axis=-1, keepdims=True),
             "nan_med": np.nanmedian(np.where(a > q3, np.nan, a)),
             "lower": np.percentile(a, 50, method="lower"), "zeros": np.zeros_like(a),
             "halves": np.full_like(a, 2.5, dtype="float64"), "fill": np.full_like(a, 2.5)}
    return rt.to_tensor(np.clip(a, q1 - k * iqr, q3 + k * iqr)), stats, float(iqr)


def _same_stats(got, want):
    _same(got[0], want[0])
    assert list(got[1]) == list(want[1])
    for key in want[1]:
        _same(got[1][key], want[1][key])
    _same(got[2], want[2])


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("spec", [False, True])
def test_median_and_iqr_clipping_as_numpy_computes_them(dtype, spec):
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((4, 5)) * 3, rng.standard_normal((7, 5)) * 50,
               rng.standard_normal((1, 5))]
    batches = [b.astype(dtype) for b in batches]
    input_spec = [d2s.InputSpec([None, 5], dtype)] if spec else None
    static = d2s.to_static(robust_clip, input_spec=input_spec)
    for a in batches:
        want = _robust_reference(a)
        eager = robust_clip(rt.to_tensor(a))
        _same_stats(eager, want)
        _same_stats(static(rt.to_tensor(a)), want)
    if spec:
        assert len(static.program_cache) == 1


# ---- spectral positional encodings ----------------------------------------------------------

class LapPE(rt.nn.Layer):
    """Graph-transformer Laplacian positional encodings: the `k` smallest non-trivial
    eigenvectors of the normalised Laplacian of the adjacency the model is given."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x, adj):
        a = adj.numpy()
        deg = a.sum(1)
        d_inv = np.diag(1.0 / np.sqrt(np.maximum(deg, 1.0)))
        lap = np.diag(np.ones_like(deg)) - d_inv @ a @ d_inv
        vals, vecs = np.linalg.eigh(lap)
        pe = np.abs(vecs[:, 1:1 + self.k]).astype("float32")
        return rt.concat([x, rt.to_tensor(pe)], axis=-1), vals, np.linalg.eigvalsh(lap)


def _lap_reference(x, a, k):
    deg = a.sum(1)
    d_inv = np.diag(1.0 / np.sqrt(np.maximum(deg, 1.0)))
    lap = np.diag(np.ones_like(deg)) - d_inv @ a @ d_inv
    vals, vecs = np.linalg.eigh(lap)
    return np.concatenate([x, np.abs(vecs[:, 1:1 + k]).astype("float32")], -1), vals


def _ring(n):
    a = np.zeros((n, n), np.float32)
    for i in range(n):
        a[i, (i + 1) % n] = a[(i + 1) % n, i] = 1
    a[0, n // 2] = a[n // 2, 0] = 1
    return a


def test_laplacian_eigenvectors_of_graphs_of_any_size_one_program():
    spec = [d2s.InputSpec([None, 3], "float32"), d2s.InputSpec([None, None], "float32")]
    layer, static = LapPE(2), d2s.to_static(LapPE(2), input_spec=spec)
    for n in (4, 6, 5):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype("float32")
        want = _lap_reference(x, _ring(n), 2)
        eager = layer(rt.to_tensor(x), rt.to_tensor(_ring(n)))
        got = static(rt.to_tensor(x), rt.to_tensor(_ring(n)))
        assert got[1].dtype == eager[1].dtype == want[1].dtype == np.float32
        np.testing.assert_allclose(eager[0].numpy(), want[0], rtol=1e-5, atol=1e-5)
        _same(got, eager)
    assert len(static.forward.program_cache) == 1


# ---- whitening and the other np.linalg functions --------------------------------------------

def linalg_summary(feats, y):
    f = feats.numpy()
    cov = f.T @ f / f.shape[0] + 0.1 * np.eye(f.shape[1], dtype=f.dtype)
    w = np.linalg.inv(cov)
    u, s, vh = np.linalg.svd(f, full_matrices=False)
    return (w, np.linalg.det(cov), np.linalg.solve(cov, y.numpy()), u, s, vh,
            np.linalg.svd(f, compute_uv=False), np.linalg.norm(f), np.linalg.norm(f, axis=1),
            np.linalg.norm(cov, "fro"), np.linalg.norm(f.astype("int64"), ord=1, axis=0),
            np.linalg.svd(cov), np.linalg.eigh(cov).eigenvalues)


def _linalg_reference(f, y):
    cov = f.T @ f / f.shape[0] + 0.1 * np.eye(f.shape[1], dtype=f.dtype)
    u, s, vh = np.linalg.svd(f, full_matrices=False)
    return (np.linalg.inv(cov), np.linalg.det(cov), np.linalg.solve(cov, y), u, s, vh,
            np.linalg.svd(f, compute_uv=False), np.linalg.norm(f), np.linalg.norm(f, axis=1),
            np.linalg.norm(cov, "fro"), np.linalg.norm(f.astype("int64"), ord=1, axis=0),
            np.linalg.svd(cov), np.linalg.eigh(cov).eigenvalues)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inverse_determinant_solve_svd_and_norms_with_numpys_dtypes(dtype):
    spec = [d2s.InputSpec([None, 3], dtype), d2s.InputSpec([3], dtype)]
    static = d2s.to_static(linalg_summary, input_spec=spec)
    rng = np.random.default_rng(2)
    for n in (5, 3, 8):
        f = (rng.standard_normal((n, 3)) * 2).astype(dtype)
        y = rng.standard_normal(3).astype(dtype)
        want = _linalg_reference(f, y)
        _same(linalg_summary(rt.to_tensor(f), rt.to_tensor(y)), want, rtol=1e-4)
        _same(static(rt.to_tensor(f), rt.to_tensor(y)), want, rtol=1e-4)
    assert len(static.program_cache) == 1


# ---- NumPy's errors, and what the program cannot take ---------------------------------------

def whiten(x):
    return np.linalg.inv((x * 1).numpy())


def quantile_at_computed_q(x):
    a = x.numpy()
    return np.percentile(a, a.max())


def test_numpys_errors_when_the_program_runs_and_refusals_at_the_line():
    static = d2s.to_static(whiten)
    np.testing.assert_allclose(static(rt.to_tensor(np.eye(2) * 2)), np.eye(2) / 2)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        whiten(rt.to_tensor(np.zeros((2, 2))))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix") as info:
        static(rt.to_tensor(np.zeros((2, 2))))
    text = shown(info.value)  # (the executor's "While running op:" note is the IR's text)
    assert f'File "{__file__}", line {whiten.__code__.co_firstlineno + 1}' in text, text
    assert not INTERNAL.search(text.partition("While running op:")[0]), text
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        static(rt.to_tensor(np.zeros((2, 3))))
    with pytest.raises(TypeError, match=r"np\.percentile\(\) of a NumPy array computed by the "
                       r"converted code: q computed by the converted code") as info:
        d2s.to_static(quantile_at_computed_q)(rt.to_tensor(np.arange(5.0)))
    assert_at_user_line(info.value, __file__, quantile_at_computed_q.__code__.co_firstlineno + 2)
