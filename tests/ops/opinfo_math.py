"""OpInfos for runtime/ops/math.py: elementwise arithmetic and math, matmul and friends."""
from __future__ import annotations

import math

import numpy as np
from opinfo import (
    ErrorSample,
    OpInfo,
    Sample,
    away_from_int,
    binary_samples,
    broadcast_error,
    positive,
    randn,
    unary_samples,
)

import runtime as rt


def _matmul_ref(x, y, transpose_x=False, transpose_y=False):
    if transpose_x and x.ndim > 1:
        x = np.swapaxes(x, -1, -2)
    if transpose_y and y.ndim > 1:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


def _matmul_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 4, 5))),
        Sample((randn(rng, 4, 3), randn(rng, 4, 5)), {"transpose_x": True}),
        Sample((randn(rng, 3, 4), randn(rng, 5, 4)), {"transpose_y": True}),
        Sample((randn(rng, 4, 3), randn(rng, 5, 4)), {"transpose_x": True, "transpose_y": True}),
        Sample((randn(rng, 2, 3, 4), randn(rng, 4, 2))),
        Sample((randn(rng, 2, 1, 3, 4), randn(rng, 3, 4, 2))),
        Sample((randn(rng, 4), randn(rng, 4, 3))),
        Sample((randn(rng, 3, 4), randn(rng, 4))),
        Sample((randn(rng, 4), randn(rng, 4))),
        Sample((randn(rng, 2, 3, 4), randn(rng, 4))),
        Sample((randn(rng, 4), randn(rng, 2, 4, 3))),
        Sample((randn(rng, 4), randn(rng, 3, 4)), {"transpose_y": True}),
    ]


def _sum_to_like_ref(g, x):
    lead = g.ndim - x.ndim
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, d in enumerate(x.shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def _nonzero(rng, *shape):
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _apart(rng, *shape):
    """Values whose pairwise differences stay clear of 0 (maximum/minimum have a kink there):
    distinct multiples of 0.25, shuffled."""
    n = int(np.prod(shape))
    return (rng.permutation(np.arange(n) - n // 2) * 0.25 + 0.05).reshape(shape)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


_erf_ref = np.vectorize(math.erf, otypes=[np.float64])


def _int_samples(rng):
    """Integer and mixed-type operands (floor_divide, remainder, pow on ints)."""
    a = rng.integers(-9, 9, (3, 4))
    b = rng.integers(1, 5, (4,)) * rng.choice([-1, 1], (4,))
    return [Sample((a, b)), Sample((a, 3)), Sample((7, b)), Sample((a.astype(np.int32), b))]


def _extremum_samples(rng):
    return [Sample((_apart(rng, 3, 4), _apart(rng, 3, 4) + 0.1)),
            Sample((_apart(rng, 3, 4), _apart(rng, 4) + 0.1)),
            Sample((_apart(rng, 2, 3), 0.4)), Sample((0.4, _apart(rng, 2, 3))),
            Sample((np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])), grad=False)]


def _pow_samples(rng):
    return [Sample((positive(rng, 3, 4), randn(rng, 3, 4))),
            Sample((positive(rng, 3, 4), randn(rng, 4))),
            Sample((randn(rng, 2, 3), 2)), Sample((positive(rng, 2, 3), 0.5)),
            Sample((randn(rng, 2, 3), 3.0)), Sample((2.0, randn(rng, 2, 3))),
            Sample((positive(rng), positive(rng, 2)))]


def _clip_samples(rng):
    x = _apart(rng, 3, 4)
    return [Sample((x,), {"min": -0.6, "max": 0.7}), Sample((x,), {"min": 0.1}),
            Sample((x,), {"max": -0.3}), Sample((x,), {})]


def _clip_ref(x, min=None, max=None):
    return np.clip(x, min, max)


def _scale_samples(rng):
    return [Sample((randn(rng, 3, 4),), {"scale": 2.5}),
            Sample((randn(rng, 3),), {"scale": -1.5, "bias": 0.5}),
            Sample((randn(rng, 3),), {"scale": 2.0, "bias": 1.0, "bias_after_scale": False}),
            Sample((rng.integers(-5, 5, (4,)),), {"scale": 3.0, "bias": 1.0})]


def _scale_ref(x, scale=1.0, bias=0.0, bias_after_scale=True):
    out = x * scale + bias if bias_after_scale else (x + bias) * scale
    return out.astype(x.dtype)


def _cast_samples(rng):
    x = randn(rng, 3, 4) * 3
    return [Sample((x,), {"dtype": "float64"}), Sample((x,), {"dtype": "float32"}, grad=False),
            Sample((x,), {"dtype": "int32"}, grad=False), Sample((x,), {"dtype": "bool"}),
            Sample((rng.integers(-5, 5, (4,)),), {"dtype": "float32"}),
            Sample((x,), {"dtype": rt.float16}, grad=False), Sample((x,), {"dtype": np.int64})]


def _cast_ref(x, dtype):
    return x.astype(rt.dtypes.convert_dtype(dtype).np)


def _int_dtype_samples(gen):
    def samples(rng):
        return [Sample((gen(rng, 3, 4),)), Sample((rng.integers(-5, 5, (3,)),))]
    return samples


_UNARY = [  # name, fn, ref, input generator, tolerance overrides
    ("abs", rt.abs, np.abs, _nonzero),
    ("sign", rt.sign, np.sign, _nonzero),
    ("square", rt.square, np.square, randn),
    ("exp", rt.exp, np.exp, randn),
    ("log", rt.log, np.log, positive),
    ("log1p", rt.log1p, np.log1p, positive),
    ("sqrt", rt.sqrt, np.sqrt, positive),
    ("rsqrt", rt.rsqrt, lambda x: 1 / np.sqrt(x), positive),
    ("sin", rt.sin, np.sin, randn),
    ("cos", rt.cos, np.cos, randn),
    ("erf", rt.erf, _erf_ref, randn),
    ("floor", rt.floor, np.floor, away_from_int),
    ("ceil", rt.ceil, np.ceil, away_from_int),
    ("round", rt.round, _round_half_away, away_from_int),
]


def _unary_info(name, fn, ref, gen):
    float_ref = (lambda x: ref(x if x.dtype.kind == "f" else x.astype(np.float32))
                 .astype(x.dtype if x.dtype.kind == "f" or name in ("abs", "sign", "square")
                         else np.float32))
    return OpInfo(name, fn, float_ref, _unary_with_ints(gen, name))


def _unary_with_ints(gen, name):
    base = unary_samples(gen)

    def samples(rng):
        out = base(rng)
        if name not in ("log", "log1p", "sqrt", "rsqrt"):  # integer inputs (float32 result)
            out.append(Sample((rng.integers(1, 5, (3,)),)))
        return out
    return samples



OPINFOS = [
    OpInfo("add", rt.add, np.add, binary_samples(), error_samples=[broadcast_error("add")]),
    OpInfo("subtract", rt.subtract, np.subtract, binary_samples(),
           error_samples=[broadcast_error("subtract")]),
    OpInfo("multiply", rt.multiply, np.multiply, binary_samples(),
           error_samples=[broadcast_error("multiply")]),
    OpInfo("divide", rt.divide, np.divide,
           binary_samples(gen_y=lambda rng, *s: rng.uniform(0.5, 2, s) * rng.choice([-1, 1], s)),
           error_samples=[broadcast_error("divide")]),
    OpInfo("neg", rt.neg, np.negative, unary_samples()),
    *[_unary_info(*row) for row in _UNARY],
    OpInfo("floor_divide", rt.floor_divide, np.floor_divide, _int_samples, grad=False,
           dtypes=("int64",), error_samples=[broadcast_error("floor_divide")]),
    OpInfo("remainder", rt.remainder, np.remainder,
           lambda rng: [*_int_samples(rng), Sample((away_from_int(rng, 3, 4) * 2, 1.5)),
                        Sample((away_from_int(rng, 3, 4), -0.7 + 0 * randn(rng, 4)))]),
    OpInfo("pow", rt.pow, lambda x, y: np.power(x, y), _pow_samples, grad_tol=1e-5,
           error_samples=[broadcast_error("pow")]),
    OpInfo("maximum", rt.maximum, np.maximum, _extremum_samples,
           error_samples=[broadcast_error("maximum")]),
    OpInfo("minimum", rt.minimum, np.minimum, _extremum_samples,
           error_samples=[broadcast_error("minimum")]),
    OpInfo("clip", rt.clip, _clip_ref, _clip_samples),
    OpInfo("scale", rt.scale, _scale_ref, _scale_samples),
    OpInfo("cast", rt.cast, _cast_ref, _cast_samples, grad=(0,),
           error_samples=[ErrorSample((np.ones(2),), {"dtype": "float8"}, ValueError,
                                      r"unknown dtype 'float8'")]),
    OpInfo("tanh", rt.tanh, np.tanh, unary_samples()),
    OpInfo("assign", rt.assign, np.copy, unary_samples()),
    OpInfo("matmul", rt.matmul, _matmul_ref, _matmul_samples,
           rtol={"float32": 1e-5, "float64": 1e-10}, atol={"float32": 1e-5, "float64": 1e-10},
           error_samples=[
               ErrorSample((np.ones((2, 4)), np.ones((3, 3))), {}, ValueError,
                           r"matmul: x has shape \[2, 4\] but y has shape \[3, 3\]; "
                           r"inner dimensions 4 and 3 differ"),
               ErrorSample((np.ones(()), np.ones((3,))), {}, ValueError,
                           r"matmul: x and y must have at least one dimension.*\[\] and \[3\]"),
           ]),
    OpInfo("expand_as", rt.expand_as, lambda x, y: np.broadcast_to(x, y.shape).copy(),
           lambda rng: [Sample((randn(rng, 3, 1), randn(rng, 2, 3, 4))),
                        Sample((randn(rng, 4), randn(rng, 3, 4))),
                        Sample((randn(rng), randn(rng, 2)))],
           grad=(0,)),
    OpInfo("sum_to_like", rt.ops.math.sum_to_like, _sum_to_like_ref,
           lambda rng: [Sample((randn(rng, 2, 3, 4), randn(rng, 3, 1))),
                        Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
                        Sample((randn(rng, 2, 3), randn(rng)))],
           grad=(0,)),
]
