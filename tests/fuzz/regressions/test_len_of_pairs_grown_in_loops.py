"""`len()` of a list of tuples of tensors that a graph loop grows (found by the observe fuzzer,
issue 33): it came back as an int64 Tensor where eager code returns a Python int (a list of
single tensors already gave an int). Each part of such a list is a tensor array; its length
stands for a Python int, as a list's length does."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


def beam(scores):
    candidates = [(scores[0], scores[1])]
    step = rt.zeros([])
    while step < scores[0]:
        step = step + 1.0
        candidates.append((scores[0] * 0.5, scores[2] + step))
    return len(candidates), len(candidates) * 2, candidates[-1][1]


def beam_np(scores):
    candidates = [(scores[0], scores[1])]
    step = 0.0
    while step < scores[0]:
        step += 1.0
        candidates.append((scores[0] * 0.5, scores[2] + step))
    return len(candidates), len(candidates) * 2, candidates[-1][1]


def test_len_of_a_list_of_pairs_is_a_python_int_as_eager():
    static = d2s.to_static(beam)
    for values in ([2.5, 1.0, 0.5], [-1.0, 1.0, 0.5], [0.5, -2.0, 3.0]):  # 3, 1, 2 items
        x = rt.to_tensor(np.asarray(values, "float32"))
        n, twice, last = beam_np(np.asarray(values, np.float64))
        for got in (beam(x), static(x)):
            assert type(got[0]) is int and type(got[1]) is int
            assert (got[0], got[1]) == (n, twice)
            np.testing.assert_allclose(got[2].numpy(), last, rtol=1e-6)
