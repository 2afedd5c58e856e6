"""`max(...)` / `min(...)` of a generator expression in converted code. The converted call read
the generator twice: once to look for graph values, then again for the answer. Over tensors it
silently dropped the items read before the first tensor (`max(p.sum() for p in parts)` gave the
largest of all but the first part); over Python numbers (`max(len(ids) for ids in batch)`, a
tokenizer's padding length) it raised `ValueError: max() arg is an empty sequence`."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def widest_part(x):
    parts = [x * 3.0, x, x * -2.0]
    return max(p.sum() for p in parts), min(p.sum() for p in parts)


def padded_length(batch, max_length):
    truncated = [ids[:max_length] for ids in batch]
    longest = max(len(ids) for ids in truncated)
    shortest = min((len(ids) for ids in truncated), default=0)
    return rt.full([len(batch), longest], shortest, dtype="int64")


def _np_widest(xv):
    sums = [(xv * 3.0).sum(), xv.sum(), (xv * -2.0).sum()]
    return max(sums), min(sums)


@pytest.mark.parametrize("xv", [np.array([1.0, 2.0], "float32"), np.array([-1.0, 0.5], "float32")])
def test_max_and_min_of_a_generator_of_tensors_read_every_item(xv):
    static = d2s.to_static(widest_part, full_graph=True)
    want = _np_widest(xv.astype("float64"))
    for fn in (widest_part, static):
        x = rt.to_tensor(xv, stop_gradient=False)
        hi, lo = fn(x)
        np.testing.assert_allclose([float(hi), float(lo)], want, rtol=1e-6)
        (hi + lo * 0.5).backward()
        grad = numeric_grad(lambda v: _np_widest(v)[0] + 0.5 * _np_widest(v)[1],
                            xv.astype("float64"))
        np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch, max_length, shape", [
    ([[1, 2, 3], [4]], 2, [2, 2]), ([[1, 2, 3], [4]], 8, [2, 3]), ([[5]], 8, [1, 1])])
def test_max_of_a_generator_of_python_numbers_converts(batch, max_length, shape):
    static = d2s.to_static(padded_length, full_graph=True)
    for fn in (padded_length, static):
        out = fn(batch, max_length)
        assert out.shape == shape
        assert int(out[0, 0]) == min(len(b[:max_length]) for b in batch)
