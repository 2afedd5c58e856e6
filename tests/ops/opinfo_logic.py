"""OpInfos for runtime/ops/logic.py: comparisons, logical and bitwise ops, where, allclose."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, binary_samples, broadcast_error, randn

import runtime as rt


def _grid(rng, *shape):
    """Small integers as floats, so that equal values (ties) really occur."""
    return rng.integers(-2, 3, size=shape).astype(np.float64)


def _compare(name, fn, ref):
    return OpInfo(name, fn, ref, binary_samples(_grid, _grid, scalars=(1.0, 0)), grad=False,
                  error_samples=[broadcast_error(name)])


def _bool_samples(rng):
    a, b = rng.standard_normal((3, 4)) > 0, rng.standard_normal((4,)) > 0
    return [Sample((a, b)), Sample((a, True)), Sample((_grid(rng, 3, 4), _grid(rng, 3, 4))),
            Sample((rng.integers(0, 3, (2, 3)), b[:3]))]


def _logical(name, fn, ref):
    return OpInfo(name, fn, ref, _bool_samples, grad=False, dtypes=("float64",),
                  error_samples=[broadcast_error(name)])


def _int_samples(rng):
    a, b = rng.integers(-8, 8, (3, 4)), rng.integers(0, 8, (4,)).astype(np.int32)
    return [Sample((a, b)), Sample((a, 5)), Sample((3, b)),
            Sample((a > 0, b > 3))]


def _bitwise(name, fn, ref):
    return OpInfo(name, fn, ref, _int_samples, grad=False, dtypes=("int64",),
                  error_samples=[broadcast_error(name, dtype=np.int64), ErrorSample(
                      (np.ones(3), np.ones(3)), {}, TypeError,
                      rf"{name}: expected integer or bool inputs, got float64")])


def _predicate_samples(rng):
    x = np.array([[0.0, np.inf, -np.inf], [np.nan, -1.5, 2.0]])
    return [Sample((x,)), Sample((randn(rng, 4),)), Sample((np.array(np.nan),)),
            Sample((rng.integers(0, 3, (3,)),))]


def _where_samples(rng):
    c = rng.standard_normal((3, 4)) > 0
    return [Sample((c, randn(rng, 3, 4), randn(rng, 3, 4))),
            Sample((c, randn(rng, 4), randn(rng, 3, 1))),
            Sample((c[0], randn(rng, 3, 4), randn(rng, 4))),
            Sample((c, randn(rng, 3, 4), 0.5)), Sample((c, -1.0, randn(rng, 3, 4))),
            Sample((np.array(True), randn(rng, 2), randn(rng, 2)))]


def _allclose_samples(rng):
    x = randn(rng, 3, 4)
    return [Sample((x, x + 1e-9)), Sample((x, x + 1e-3)),
            Sample((x, x + 1e-3), {"atol": 1e-2}), Sample((x, x * 1.01), {"rtol": 0.02}),
            Sample((np.array([np.nan]), np.array([np.nan])), {"equal_nan": True}),
            Sample((x, x[0]))]


def _equal_all_samples(rng):
    x = _grid(rng, 3, 4)
    y = x.copy()
    y[1, 2] += 1
    return [Sample((x, x.copy())), Sample((x, y)), Sample((x, x[0])), Sample((x, x[:2]))]


OPINFOS = [
    _compare("equal", rt.equal, np.equal),
    _compare("not_equal", rt.not_equal, np.not_equal),
    _compare("less_than", rt.less_than, np.less),
    _compare("less_equal", rt.less_equal, np.less_equal),
    _compare("greater_than", rt.greater_than, np.greater),
    _compare("greater_equal", rt.greater_equal, np.greater_equal),
    _logical("logical_and", rt.logical_and, np.logical_and),
    _logical("logical_or", rt.logical_or, np.logical_or),
    _logical("logical_xor", rt.logical_xor, np.logical_xor),
    OpInfo("logical_not", rt.logical_not, np.logical_not,
           lambda rng: [Sample((rng.standard_normal((3, 4)) > 0,)), Sample((_grid(rng, 5),))],
           grad=False),
    _bitwise("bitwise_and", rt.bitwise_and, np.bitwise_and),
    _bitwise("bitwise_or", rt.bitwise_or, np.bitwise_or),
    _bitwise("bitwise_xor", rt.bitwise_xor, np.bitwise_xor),
    OpInfo("bitwise_not", rt.bitwise_not, np.invert,
           lambda rng: [Sample((rng.integers(-8, 8, (3, 4)),)),
                        Sample((rng.standard_normal(4) > 0,))],
           grad=False, dtypes=("int64",), error_samples=[ErrorSample(
               (np.ones(3),), {}, TypeError, r"bitwise_not: x has dtype float64")]),
    OpInfo("isfinite", rt.isfinite, np.isfinite, _predicate_samples, grad=False),
    OpInfo("isnan", rt.isnan, np.isnan, _predicate_samples, grad=False),
    OpInfo("isinf", rt.isinf, np.isinf, _predicate_samples, grad=False),
    OpInfo("where", rt.where, np.where, _where_samples, grad=(1, 2), error_samples=[
        ErrorSample((np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3))), {}, TypeError,
                    r"where: condition must be a bool tensor, got float64 of shape \[2, 3\]"),
        ErrorSample((np.ones((2, 3)) > 0, np.ones((4,)), np.ones((2, 3))), {}, ValueError,
                    r"where: x has shape \[4\] but y has shape \[2, 3\]")]),
    OpInfo("allclose", rt.allclose, lambda x, y, **kw: np.asarray(np.allclose(x, y, **kw)),
           _allclose_samples, grad=False, dtypes=("float64",), error_samples=[
               broadcast_error("allclose")]),
    OpInfo("equal_all", rt.equal_all, lambda x, y: np.asarray(np.array_equal(x, y)),
           _equal_all_samples, grad=False),
]
