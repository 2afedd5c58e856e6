"""OpInfos for runtime/ops/creation.py and random.py.

Random ops are checked against the stream itself: the call seeds the generator, and the
reference draws from a NumPy PCG64 generator with the same seed.
"""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime as rt


def _np(dtype):
    return np.dtype(dtype if dtype is not None else "float32")


def _full_ref(shape, fill_value, dtype=None):
    return np.full(shape, fill_value, dtype=_np(dtype))


def _arange_ref(start, end=None, step=1, dtype=None):
    ints = all(isinstance(v, int) for v in (start, end, step) if v is not None)
    return np.arange(start, end, step, dtype=_np(dtype or ("int64" if ints else "float32")))


def _linspace_ref(start, stop, num, dtype=None):
    return np.linspace(start, stop, num).astype(_np(dtype))


def _eye_ref(n, m=None, dtype=None):
    return np.eye(n, m, dtype=_np(dtype))


def _seeded(fn):
    def call(*args, **kwargs):
        rt.seed(1234)
        return fn(*args, **kwargs)
    return call


def _host():
    return np.random.Generator(np.random.PCG64(1234))


def _fixed(*samples):
    return lambda rng: [Sample(args, kwargs) for args, kwargs in samples]


def _err(args, kwargs, match, exc=ValueError):
    return ErrorSample(args, kwargs, exc, match)


OPINFOS = [
    OpInfo("full", rt.full, _full_ref, _fixed(
        (([2, 3], 1.5), {}), (([4], 7), {"dtype": "int64"}), (([], 2.0), {"dtype": "float64"}),
        (([2, 0], True), {"dtype": "bool"}), ((3, -1.0), {})), grad=False,
        error_samples=[_err(([2, -1], 0.0), {}, r"full: shape \[2, -1\] has a negative dim"),
                       _err(("ab", 0.0), {}, r"full: shape must be a list of ints", TypeError)]),
    OpInfo("full_like", rt.full_like, lambda x, v, dtype=None: np.full(
        x.shape, v, dtype=x.dtype if dtype is None else np.dtype(dtype)),
        lambda rng: [Sample((randn(rng, 2, 3), 4.0)),
                     Sample((randn(rng, 3), 2), {"dtype": "int32"}),
                     Sample((rng.integers(0, 3, (2,)), 1))], grad=False),
    OpInfo("arange", rt.arange, _arange_ref, _fixed(
        ((5,), {}), ((2, 9, 3), {}), ((0.0, 1.0, 0.25), {}), ((5, 0, -2), {}),
        ((1, 4), {"dtype": "float64"}), ((3, 3), {})), grad=False,
        error_samples=[_err((0, 5, 0), {}, r"arange: step must not be 0")]),
    OpInfo("linspace", rt.linspace, _linspace_ref, _fixed(
        ((0, 1, 5), {}), ((-2.0, 3.0, 4), {"dtype": "float64"}), ((1, 1, 1), {})), grad=False,
        error_samples=[_err((0, 1, -1), {}, r"linspace: num must be non-negative, got -1")]),
    OpInfo("eye", rt.eye, _eye_ref, _fixed(((3,), {}), ((2, 4), {"dtype": "int64"})),
           grad=False,
           error_samples=[_err((-1,), {}, r"eye: num_rows must be a non-negative int")]),
    OpInfo("tril", rt.tril, lambda x, diagonal=0: np.tril(x, diagonal), lambda rng: [
        Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 3), 1)),
        Sample((randn(rng, 4, 3), -1))],
        error_samples=[_err((np.ones(3),), {}, r"tril: x must have at least 2 dims, got shape "
                                               r"\[3\]")]),
    OpInfo("triu", rt.triu, lambda x, diagonal=0: np.triu(x, diagonal), lambda rng: [
        Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 3), -1))]),
    OpInfo("uniform_random", _seeded(rt.uniform),
           lambda shape, dtype=None, min=-1.0, max=1.0: _host().uniform(min, max, shape).astype(
               _np(dtype)),
           _fixed((([2, 3],), {}), (([4],), {"min": 2.0, "max": 5.0, "dtype": "float64"})),
           grad=False,
           error_samples=[_err(([2],), {"dtype": "int64"},
                               r"uniform_random: dtype must be a floating type, got int64",
                               TypeError)]),
    OpInfo("gaussian_random", _seeded(rt.normal),
           lambda mean, std, shape: _host().normal(mean, std, shape).astype(np.float32),
           _fixed(((1.0, 2.0, [3, 2]), {}), ((0.0, 1.0, [5]), {})), grad=False,
           error_samples=[_err((0.0, 1.0, None), {}, r"normal: shape is required")]),
    OpInfo("randint", _seeded(rt.randint),
           lambda low, high, shape, dtype=None: _host().integers(low, high, shape).astype(
               _np(dtype or "int64")),
           _fixed(((0, 5, [3, 4]), {}), ((-3, 3, [6]), {"dtype": "int32"})), grad=False,
           error_samples=[_err((5, 5, [2]), {}, r"randint: high \(5\) must be greater than low "
                                                r"\(5\)")]),
    OpInfo("randperm", _seeded(rt.randperm), lambda n: _host().permutation(n),
           _fixed(((6,), {}), ((0,), {})), grad=False),
    OpInfo("bernoulli", _seeded(rt.bernoulli),
           lambda p: (_host().random(p.shape) < p).astype(p.dtype),
           lambda rng: [Sample((rng.uniform(0, 1, (4, 5)),))], grad=False,
           error_samples=[_err((np.ones(3, dtype=np.int64),), {},
                               r"bernoulli: x \(probabilities\) must be floating", TypeError)]),
]
