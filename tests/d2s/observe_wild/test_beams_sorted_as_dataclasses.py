"""Beam search bookkeeping in Python, as generation utilities write it: each hypothesis a
dataclass holding a Python float score (`beam.score + logp.item()`) and a list of Python int
token ids (`int(idx)`), candidates sorted with `candidates.sort(key=lambda b: b.score,
reverse=True)` and cut to the beam width.

Two bugs: the sort compared the items' structures with `!=`, which for dataclasses calls their
`__eq__` over graph values (`TypeError: bool() of a tensor ... File "<string>", line 4, in
__eq__`); and items whose leaves were values standing for Python numbers came back from the
sort as 0-d tensors (the returned token ids and score were `Tensor`s where eager has `int` and
`float`, silently, on the inputs where a real sort ran). Now dataclass items sort as tuples
do, and such leaves stay Python numbers."""
from dataclasses import dataclass, field

import numpy as np
import pytest

import d2s
import runtime as rt

TRANS = np.array([[0.1, 0.9, 0.0, 0.0], [0.0, 0.1, 0.9, 0.0], [0.0, 0.0, 0.1, 0.9],
                  [0.8, 0.1, 0.0, 0.1]], np.float32)
OTHER = np.array([[0.5, 0.3, 0.15, 0.05], [0.25, 0.1, 0.6, 0.05], [0.05, 0.2, 0.15, 0.6],
                  [0.4, 0.35, 0.2, 0.05]], np.float32)


@dataclass
class Hypothesis:
    score: float
    tokens: list = field(default_factory=list)


def beam_search(trans, num_beams, steps):
    beams = [Hypothesis(0.0, [0])]
    for _ in range(steps):
        candidates = []
        for beam in beams:
            logp = rt.log(trans[beam.tokens[-1]] + 1e-6)
            vals, idx = rt.topk(logp, num_beams)
            for v, i in zip(vals, idx):
                candidates.append(Hypothesis(beam.score + v.item(), beam.tokens + [int(i)]))
        candidates.sort(key=lambda b: b.score, reverse=True)
        beams = candidates[:num_beams]
    return [(b.tokens, b.score) for b in beams]


def _np_beam_search(trans, num_beams, steps):
    beams = [(0.0, [0])]
    for _ in range(steps):
        cands = []
        for score, toks in beams:
            logp = np.log(trans[toks[-1]] + 1e-6)
            for i in np.argsort(-logp, kind="stable")[:num_beams]:
                cands.append((score + float(logp[i]), toks + [int(i)]))
        cands.sort(key=lambda c: c[0], reverse=True)
        beams = cands[:num_beams]
    return [(toks, score) for score, toks in beams]


@pytest.mark.parametrize("table,num_beams,steps", [(TRANS, 2, 3), (TRANS, 1, 2),
                                                   (OTHER, 3, 2)])
def test_sorted_dataclass_beams_match_eager(table, num_beams, steps):
    static = d2s.to_static(beam_search)
    trans = rt.to_tensor(table)
    want, got = beam_search(trans, num_beams, steps), static(trans, num_beams, steps)
    ref = _np_beam_search(table, num_beams, steps)
    assert len(got) == len(want) == len(ref)
    for (gt, gs), (wt, ws), (rt_, rs) in zip(got, want, ref):
        assert [type(t) for t in gt] == [type(t) for t in wt] == [int] * len(wt)
        assert gt == wt == rt_
        assert type(gs) is type(ws) is float
        np.testing.assert_allclose(gs, ws, rtol=1e-6)
        np.testing.assert_allclose(gs, rs, rtol=1e-5)
