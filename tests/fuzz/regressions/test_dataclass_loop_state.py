"""A dataclass rebound in a graph loop's body (found by the breadth fuzzer, issue 35: "'q' is a
Python Span changed inside a loop whose condition is a tensor ... only tensors, numbers and
lists can change in such a loop", where a namedtuple converted). The loop carries its fields
as it does a namedtuple's: a tensor field, and a Python int field that becomes a counter."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


@dataclasses.dataclass
class Decoded:
    hidden: object
    steps: int


def decode(x, limit):
    state = Decoded(x * 1.0, 0)
    while state.hidden.sum() < limit:
        if state.hidden.mean() > 0.0:
            state = Decoded(state.hidden * 2.0 + 1.0, state.steps + 1)
        else:
            state = Decoded(state.hidden + 2.0, state.steps + 2)
    return state.hidden, state.steps


def decode_np(x, limit):
    hidden, steps = x.astype(np.float64), 0
    while hidden.sum() < limit:
        if hidden.mean() > 0.0:
            hidden, steps = hidden * 2.0 + 1.0, steps + 1
        else:
            hidden, steps = hidden + 2.0, steps + 2
    return hidden, steps


# zero trips, positive then negative paths, several trips
CASES = [([3.0, 2.0], 1.0), ([0.5, 0.25], 6.0), ([-2.0, -1.5], 2.0), ([-0.5, 0.25], 9.0)]


def test_dataclass_carried_by_a_tensor_loop_matches_eager_and_numpy():
    static = d2s.to_static(decode)
    for values, limit in CASES:
        x, lim = rt.to_tensor(np.asarray(values, "float32")), rt.to_tensor(limit)
        want_h, want_n = decode_np(np.asarray(values), limit)
        eager_h, eager_n = decode(x, lim)
        static_h, static_n = static(x, lim)
        assert type(eager_n) is int and eager_n == want_n
        assert type(static_n) is type(eager_n) and static_n == want_n
        np.testing.assert_allclose(eager_h.numpy(), want_h, rtol=1e-6)
        np.testing.assert_allclose(static_h.numpy(), want_h, rtol=1e-6)


@pytest.mark.parametrize("values, limit", CASES)
def test_gradient_through_the_dataclass_matches_finite_differences(values, limit):
    static = d2s.to_static(decode)
    x = rt.to_tensor(np.asarray(values, "float32"), stop_gradient=False)
    hidden, _ = static(x, rt.to_tensor(limit))
    (hidden * hidden).sum().backward()
    want = numeric_grad(lambda v: (decode_np(v, limit)[0] ** 2).sum(), np.asarray(values))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)
