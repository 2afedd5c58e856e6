"""OpInfos for runtime/ops/transcendental.py (tan, inverse and hyperbolic trigonometry,
expm1, trunc / frac, atan2, logit, deg2rad / rad2deg, hypot) and `isclose`."""
from __future__ import annotations

import numpy as np
from opinfo import OpInfo, Sample, away_from_int, binary_samples, broadcast_error, randn

import runtime as rt


def _inside_one(rng, *shape):
    return rng.uniform(-0.9, 0.9, shape)


def _above_one(rng, *shape):
    return rng.uniform(1.1, 3.0, shape)


def _probability(rng, *shape):
    return rng.uniform(0.05, 0.95, shape)


def _tan_domain(rng, *shape):
    return rng.uniform(-1.2, 1.2, shape)


def _unary(gen, ints=True):
    """A matrix, a vector, a 0-d tensor, a 3-D tensor, and integer inputs (float32 out)."""
    def samples(rng):
        out = [Sample((gen(rng, 3, 4),)), Sample((gen(rng, 5),)), Sample((gen(rng),)),
               Sample((gen(rng, 2, 1, 3),))]
        if ints:
            out.append(Sample((rng.integers(-1, 2, (3,)),)))
        return out
    return samples


def _float_ref(ref):
    """NumPy's function with Paddle's rule: integer inputs compute in float32."""
    def call(x, *args, **kw):
        x = np.asarray(x)
        return ref(x if x.dtype.kind == "f" else x.astype(np.float32), *args, **kw)
    return call


def _scaled(factor):
    """x * factor rounded once to x's float dtype (float32 for integers)."""
    def call(x):
        x = np.asarray(x)
        return (x.astype(np.float64) * factor).astype(x.dtype if x.dtype.kind == "f"
                                                      else np.float32)
    return call


def _atan2_samples(rng):
    return binary_samples(scalars=())(rng) + [
        Sample((rng.integers(-3, 4, (4,)), rng.integers(1, 4, (4,))))]


def _logit_samples(rng):
    x = _probability(rng, 3, 4)
    return [Sample((x,)), Sample((x,), {"eps": 0.1}),
            Sample((np.array([0.02, 0.5, 0.97]),), {"eps": 0.05}, grad=False)]


def _logit_ref(x, eps=None):
    x = np.clip(x, eps, 1 - eps) if eps is not None else x
    return np.log(x / (1 - x))


def _hypot_samples(rng):
    return binary_samples(scalars=())(rng) + [
        Sample((np.array([0.0, 3.0]), np.array([0.0, 4.0])), grad=False)]


def _isclose_samples(rng):
    x = randn(rng, 3, 4)
    y = x + rng.choice([0.0, 1e-9, 1e-3], (3, 4))
    nan_x = np.array([np.nan, 1.0, 2.0])
    return [Sample((x, y)), Sample((x, y), {"rtol": 1e-2}), Sample((x, y[0])),
            Sample((nan_x, nan_x), {"equal_nan": True}), Sample((nan_x, nan_x))]


_UNARY = [  # name, function, NumPy reference, inputs, with integer inputs
    ("tan", rt.tan, np.tan, _tan_domain, True),
    ("asin", rt.asin, np.arcsin, _inside_one, False),
    ("acos", rt.acos, np.arccos, _inside_one, False),
    ("atan", rt.atan, np.arctan, randn, True),
    ("sinh", rt.sinh, np.sinh, randn, True),
    ("cosh", rt.cosh, np.cosh, randn, True),
    ("asinh", rt.asinh, np.arcsinh, randn, True),
    ("acosh", rt.acosh, np.arccosh, _above_one, False),
    ("atanh", rt.atanh, np.arctanh, _inside_one, False),
    ("expm1", rt.expm1, np.expm1, randn, True),
]

OPINFOS = [OpInfo(name, fn, _float_ref(ref), _unary(gen, ints))
           for name, fn, ref, gen, ints in _UNARY] + [
    OpInfo("trunc", rt.trunc, np.trunc, _unary(away_from_int, ints=False)),
    OpInfo("trunc (integers)", rt.trunc, lambda x: x,
           lambda rng: [Sample((rng.integers(-5, 5, (3, 2)),))], grad=False),
    OpInfo("frac", rt.frac, lambda x: x - np.trunc(x), _unary(away_from_int, ints=False)),
    OpInfo("atan2", rt.atan2, _float_ref(lambda x, y: np.arctan2(
        x, y if y.dtype.kind == "f" else y.astype(np.float32))), _atan2_samples,
        error_samples=[broadcast_error("atan2")]),
    OpInfo("logit", rt.logit, _logit_ref, _logit_samples),
    OpInfo("deg2rad", rt.deg2rad, _scaled(np.pi / 180.0), _unary(randn)),
    OpInfo("rad2deg", rt.rad2deg, _scaled(180.0 / np.pi), _unary(randn)),
    OpInfo("hypot", rt.hypot, np.hypot, _hypot_samples),
    OpInfo("isclose", rt.isclose, np.isclose, _isclose_samples, grad=False),
]


def _nan_pairs(rng):
    x, y = rng.permutation(12).reshape(3, 4) * 0.5, rng.permutation(12).reshape(3, 4) * 0.5
    x, y = x + 0.1, y - 0.1  # no ties
    x[0, 1] = y[1, 2] = np.nan
    return [Sample((x, y)), Sample((x, y[0])), Sample((x[0], 1.3))]


def _copysign_samples(rng):
    x = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    return [Sample((x, randn(rng, 3, 4))), Sample((x, randn(rng, 4))), Sample((x, -1.0))]


def _heaviside_samples(rng):
    x = rng.choice([-1.5, 0.0, 2.0], (3, 4))
    return [Sample((x, randn(rng, 3, 4))), Sample((x, np.array(0.5))), Sample((x, randn(rng, 4)))]


def _logaddexp_samples(rng):
    big = randn(rng, 3, 4) * 300.0  # far apart: a naive log(exp + exp) overflows
    return binary_samples(scalars=())(rng) + [Sample((big, -big), grad=False),
                                              Sample((big, big))]


def _isin_samples(rng):
    return [Sample((rng.integers(0, 6, (3, 4)), rng.integers(0, 6, (5,)))),
            Sample((rng.integers(0, 6, (4,)), rng.integers(0, 6, (2, 2))), {"invert": True}),
            Sample((np.array([0.5, 1.5, 2.5]), np.array([1.5, 3.0])))]


OPINFOS += [
    OpInfo("fmax", rt.fmax, np.fmax, _nan_pairs),
    OpInfo("fmin", rt.fmin, np.fmin, _nan_pairs),
    OpInfo("copysign", rt.copysign, np.copysign, _copysign_samples, grad=(0,),
           error_samples=[broadcast_error("copysign")]),
    OpInfo("signbit", rt.signbit, np.signbit, lambda rng: [
        Sample((np.array([-1.0, -0.0, 0.0, 2.0, -np.inf]),)),
        Sample((rng.integers(-3, 3, (3, 2)),))], grad=False),
    OpInfo("heaviside", rt.heaviside, np.heaviside, _heaviside_samples, grad=(1,)),
    OpInfo("logaddexp", rt.logaddexp, np.logaddexp, _logaddexp_samples,
           error_samples=[broadcast_error("logaddexp")]),
    OpInfo("isin", rt.isin, lambda x, t, invert=False: np.isin(x, t, invert=invert),
           _isin_samples, grad=False),
]
