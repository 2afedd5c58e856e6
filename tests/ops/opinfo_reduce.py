"""OpInfos for runtime/ops/reduce.py: reductions over axis=None, ints, lists, keepdim."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, positive, randn

import runtime as rt


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _distinct(rng, *shape):
    """Distinct values (no ties, so max/min/argmax are differentiable/unique)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.15).reshape(shape)


_AXES = [{}, {"axis": 0}, {"axis": -1}, {"axis": 1, "keepdim": True}, {"axis": [0, 2]},
         {"axis": (-1, 0), "keepdim": True}, {"axis": None, "keepdim": True}, {"axis": []}]


def reduce_samples(gen=randn):
    def samples(rng):
        out = [Sample((gen(rng, 2, 3, 4),), dict(kw)) for kw in _AXES]
        out += [Sample((gen(rng),)), Sample((gen(rng),), {"axis": 0}),
                Sample((gen(rng, 5),), {"axis": 0, "keepdim": True})]
        return out
    return samples


def _ref(fn, **fixed):
    def ref(x, axis=None, keepdim=False, **kw):
        axis = None if axis == [] or x.ndim == 0 else _np_axis(axis)
        return np.asarray(fn(x, axis=axis, keepdims=keepdim, **fixed, **kw))
    return ref


def _sum_ref(x, axis=None, dtype=None, keepdim=False):
    dt = np.dtype(dtype) if dtype else (np.int64 if x.dtype in (np.bool_, np.int32)
                                        else x.dtype)
    return _ref(np.sum)(x, axis, keepdim, dtype=dt)


def _sum_samples(rng):
    return [*reduce_samples()(rng),
            Sample((rng.integers(0, 5, (3, 4)).astype(np.int32),), {"axis": 1}),
            Sample((rng.integers(0, 2, (3, 4)).astype(bool),)),
            Sample((randn(rng, 3, 4),), {"dtype": "float64"})]


def _logsumexp_ref(x, axis=None, keepdim=False):
    axis = None if axis == [] else _np_axis(axis)
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=axis)


def _arg_ref(fn):
    def ref(x, axis=None, keepdim=False, dtype="int64"):
        if axis is None:
            out = np.asarray(fn(x.reshape(-1)))
            return out.reshape((1,) * x.ndim) if keepdim else out
        return fn(x, axis=axis, keepdims=keepdim)
    return ref


def _arg_samples(rng):
    return [Sample((_distinct(rng, 3, 4),)), Sample((_distinct(rng, 3, 4),), {"axis": 1}),
            Sample((_distinct(rng, 2, 3, 4),), {"axis": -2, "keepdim": True}),
            Sample((_distinct(rng, 3, 4),), {"keepdim": True}),
            Sample((np.array([1.0, 3.0, 3.0, 0.0]),), {"axis": 0})]


def _bool_samples(rng):
    x = rng.standard_normal((3, 4)) > 0
    return [Sample((x,)), Sample((x,), {"axis": 1}), Sample((x,), {"axis": 0, "keepdim": True}),
            Sample((np.zeros((2, 3)),), {"axis": -1}), Sample((rng.integers(0, 2, (4,)),))]


def _cumsum_ref(x, axis=None, dtype=None):
    if x.ndim == 0:  # a 0-d input stays 0-d (NumPy would give shape [1])
        return x.astype(dtype or x.dtype)
    if axis is None:
        x, axis = x.reshape(-1), 0
    dt = np.dtype(dtype) if dtype else (np.int64 if x.dtype in (np.bool_, np.int32)
                                        else x.dtype)
    return np.cumsum(x, axis=axis, dtype=dt)


def _cumsum_samples(rng):
    return [Sample((randn(rng, 3, 4),), {"axis": 0}), Sample((randn(rng, 3, 4),), {"axis": -1}),
            Sample((randn(rng, 2, 3),)), Sample((randn(rng),), {"axis": 0}),
            Sample((randn(rng, 2, 3, 4),), {"axis": 1}),
            Sample((rng.integers(0, 5, (5,)).astype(np.int32),), {"axis": 0}),
            Sample((randn(rng, 3, 4),), {"axis": 1, "dtype": "float64"})]


def _var_ref(ddof_default=1, fn=np.var):
    def ref(x, axis=None, unbiased=True, keepdim=False):
        axis = None if axis == [] else _np_axis(axis)
        return np.asarray(fn(x, axis=axis, keepdims=keepdim, ddof=1 if unbiased else 0))
    return ref


def _var_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"axis": 1}),
            Sample((randn(rng, 2, 3, 4),), {"axis": [0, 2], "keepdim": True}),
            Sample((randn(rng, 5),), {"unbiased": False})]


def _norm_ref(x, p="fro", axis=None, keepdim=False):
    axis = _np_axis(axis)
    a = np.abs(x)
    if p in ("fro", 2):
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
    if p == np.inf:
        return np.max(a, axis=axis, keepdims=keepdim)
    if p == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdim)
    return np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


def _norm_samples(rng):
    x = _distinct(rng, 3, 4) + 0.01
    return [Sample((x,)), Sample((x,), {"p": 2, "axis": 1}), Sample((x,), {"p": 1}),
            Sample((x,), {"p": 1, "axis": 0, "keepdim": True}),
            Sample((x,), {"p": np.inf, "axis": -1}), Sample((x,), {"p": -np.inf}),
            Sample((x,), {"p": 3, "axis": [0, 1]})]


_AXIS_ERR = ErrorSample((np.ones((2, 3)),), {"axis": 2}, ValueError,
                        r"{}: axis=2 is out of range for a tensor of rank 2")


def _axis_error(name):
    return ErrorSample(_AXIS_ERR.args, _AXIS_ERR.kwargs, ValueError,
                       _AXIS_ERR.match.format(name))


OPINFOS = [
    OpInfo("sum", rt.sum, _sum_ref, _sum_samples, error_samples=[_axis_error("sum")]),
    OpInfo("mean", rt.mean, _ref(np.mean), reduce_samples(), error_samples=[
        _axis_error("mean"),
        ErrorSample((np.ones((2, 3)),), {"axis": 1.5}, TypeError,
                    r"mean: axis must be an int, a list of ints or None, got 1.5")]),
    OpInfo("max", rt.max, _ref(np.max), reduce_samples(_distinct),
           error_samples=[_axis_error("max")]),
    OpInfo("min", rt.min, _ref(np.min), reduce_samples(_distinct),
           error_samples=[_axis_error("min")]),
    OpInfo("prod", rt.prod, _ref(np.prod), reduce_samples(lambda rng, *s: positive(
        rng, *s, low=0.5, high=1.5) * rng.choice([-1, 1], s)), error_samples=[_axis_error("prod")]),
    OpInfo("logsumexp", rt.logsumexp, _logsumexp_ref, reduce_samples(),
           error_samples=[_axis_error("logsumexp")]),
    OpInfo("argmax", rt.argmax, _arg_ref(np.argmax), _arg_samples, grad=False,
           error_samples=[_axis_error("argmax"), ErrorSample(
               (np.ones((2, 3)),), {"axis": [0, 1]}, ValueError,
               r"argmax: axis must be None or one int, got \[0, 1\]")]),
    OpInfo("argmin", rt.argmin, _arg_ref(np.argmin), _arg_samples, grad=False,
           error_samples=[_axis_error("argmin")]),
    OpInfo("all", rt.all, _ref(np.all), _bool_samples, grad=False, dtypes=("float64",)),
    OpInfo("any", rt.any, _ref(np.any), _bool_samples, grad=False, dtypes=("float64",)),
    OpInfo("cumsum", rt.cumsum, _cumsum_ref, _cumsum_samples,
           error_samples=[_axis_error("cumsum")]),
    OpInfo("var", rt.var, _var_ref(), _var_samples),
    OpInfo("std", rt.std, _var_ref(fn=np.std), _var_samples),
    OpInfo("norm", rt.norm, _norm_ref, _norm_samples, error_samples=[
        ErrorSample((np.ones(3),), {"p": -1}, ValueError, r"norm: p=-1 is not supported")]),
    OpInfo("unreduce", rt.ops.reduce.unreduce,
           lambda g, x, axis=None, keepdim=False, mean=False: np.broadcast_to(
               np.expand_dims(g, tuple(axis)) if axis and not keepdim else g, x.shape)
           / (np.prod([x.shape[a] for a in axis]) if mean else 1),
           lambda rng: [Sample((randn(rng, 3), randn(rng, 3, 4)), {"axis": [1]}),
                        Sample((randn(rng, 1, 4), randn(rng, 3, 4)),
                               {"axis": [0], "keepdim": True, "mean": True})],
           grad=(0,)),
]
