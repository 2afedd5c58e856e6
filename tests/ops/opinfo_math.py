"""OpInfos for runtime/ops/math.py: elementwise arithmetic and math, matmul and friends."""
from __future__ import annotations

import numpy as np
from opinfo import (
    ErrorSample,
    OpInfo,
    Sample,
    binary_samples,
    broadcast_error,
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
