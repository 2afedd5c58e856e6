"""A false refusal the state fuzzer found (seed 33301, issue 35), shrunk: a list of tuples
popped and appended to in a Python `for` under a tensor `if` whose body returns early, and
appended to under a tensor `if` in the else branch. Eager code runs; the converted call raises
`StateChangeError: the returned value has a different structure depending on an if whose
condition is a tensor (...): a tuple of length 2 in the if branch and Undefined in the else
branch` (both paths return a pair; "Undefined" is an internal word). The same code with a list
of single tensors converts. Not fixed yet (lists of tuples grown under tensor conditions:
d2s/operators/lists.py), so a strict expected failure: it fails loudly once fixed."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


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


INPUTS = [([2.25, 0.25, 0.75], [0.75, -0.25, 1.25]), ([-0.75, -2.25, -0.25], [0.75, 0.25, -2.75]),
          ([-0.25, -1.25, 0.25], [0.25, -2.75, 1.25])]


@pytest.mark.xfail(strict=True, reason="a list of tuples popped before an early return under "
                   "a tensor if is refused (see the module docstring)")
def test_pairs_popped_before_an_early_return_convert_as_eager():
    static = d2s.to_static(drain)
    for xv, yv in INPUTS:
        x, y = rt.to_tensor(np.asarray(xv, "float32")), rt.to_tensor(np.asarray(yv, "float32"))
        (eh, en), (sh, sn) = drain(x, y), static(x, y)
        assert type(sn) is int and sn == en
        np.testing.assert_allclose(sh.numpy(), eh.numpy(), rtol=1e-6)
