"""A false refusal the state fuzzer found (seed 33301, issue 35), shrunk: a list of tuples
popped and appended to in a Python `for` under a tensor `if` whose body returns early, and
appended to under a tensor `if` in the else branch. The converted call raised
`StateChangeError: the returned value has a different structure ... a tuple of length 2 in
the if branch and Undefined in the else branch`: the `for` with an early return made the list
a tensor array of pairs in both branches, but the popped list object was still carried beside
it (`[]` in one branch, `[(..)]` in the other). The name carries it now, as it does a list of
single tensors (`control_flow._arrays_made_inside`)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def drain(x, y):
    h = x * 1.0
    pairs = [(x * 1.0, y * 1.0)]
    if x[2] > 0.0:
        for _ in range(2):
            h = h + pairs.pop()[0]
            if rt.sum(h) > 1.0:
                return h, len(pairs)
            pairs.append((x, x * 0.5))
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            if rt.max(y) < 1.5:
                continue
    elif rt.max(y) < 1.5:
        pairs.append((y, y * 0.5))
    return h, len(pairs)


def drain_np(x, y):
    h = x * 1.0
    pairs = [(x * 1.0, y * 1.0)]
    if x[2] > 0.0:
        for _ in range(2):
            h = h + pairs.pop()[0]
            if h.sum() > 1.0:
                return h, len(pairs)
            pairs.append((x, x * 0.5))
    elif y.max() < 1.5:
        pairs.append((y, y * 0.5))
    return h, len(pairs)


# an early return on the first pop (0 pairs left); the elif's append (2); both pops without
# a return (1); neither branch appends (1)
INPUTS = [([2.25, 0.25, 0.75], [0.75, -0.25, 1.25]), ([-0.75, -2.25, -0.25], [0.75, 0.25, -2.75]),
          ([-0.25, -1.25, 0.25], [0.25, -2.75, 1.25]), ([0.5, 1.0, -0.5], [2.0, 0.5, -1.0])]


def test_pairs_popped_before_an_early_return_convert_as_eager():
    static = d2s.to_static(drain)
    counts = set()
    for xv, yv in INPUTS:
        x, y = rt.to_tensor(np.asarray(xv, "float32")), rt.to_tensor(np.asarray(yv, "float32"))
        want_h, want_n = drain_np(np.asarray(xv), np.asarray(yv))
        (eh, en), (sh, sn) = drain(x, y), static(x, y)
        assert type(en) is int and en == want_n
        assert type(sn) is int and sn == want_n
        np.testing.assert_allclose(eh.numpy(), want_h, rtol=1e-6)
        np.testing.assert_allclose(sh.numpy(), want_h, rtol=1e-6)
        counts.add(want_n)
    assert counts == {0, 1, 2}  # (the inputs take every path)
    assert len(static.program_cache) == 1


@pytest.mark.parametrize("xv, yv", INPUTS)
def test_gradient_through_the_popped_pairs_matches_finite_differences(xv, yv):
    static = d2s.to_static(drain)
    x = rt.to_tensor(np.asarray(xv, "float32"), stop_gradient=False)
    h, _ = static(x, rt.to_tensor(np.asarray(yv, "float32")))
    (h * h).sum().backward()
    want = numeric_grad(lambda v: (drain_np(v, np.asarray(yv))[0] ** 2).sum(), np.asarray(xv))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)
