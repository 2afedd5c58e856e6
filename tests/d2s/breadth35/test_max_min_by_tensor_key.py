"""`max(items, key=...)` / `min(items, key=...)` where the keys are tensors computed by the
converted code (the best candidate or hypothesis by its score): the item is chosen when the
program runs, Python's first item among ties, with eager's values and gradients (was a
`bool() of a tensor` refusal)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def best_candidate(x):
    candidates = [x * 1.0, x * 2.0, x - 3.0]
    lowest = min(candidates, key=lambda c: c.sum())
    highest = max(candidates, key=lambda c: c.sum())
    return lowest, highest


def _np_best(x):
    cands = [x * 1.0, x * 2.0, x - 3.0]
    sums = [c.sum() for c in cands]
    return cands[int(np.argmin(sums))], cands[int(np.argmax(sums))]


@pytest.mark.parametrize("x", [[1.0, 2.0], [-1.0, -2.0], [0.0, 0.0], [3.0, -3.0]])
def test_candidate_by_tensor_key(x):
    x = np.asarray(x, np.float32)
    static = d2s.to_static(best_candidate)
    eager = best_candidate(rt.to_tensor(x))
    got = static(rt.to_tensor(x))
    for e, g, want in zip(eager, got, _np_best(x), strict=True):
        np.testing.assert_allclose(e.numpy(), want)
        np.testing.assert_allclose(g.numpy(), e.numpy())
    assert len(static.program_cache) == 1


def best_hypothesis(scores, default_score):
    """Beam hypotheses as (token id, score) tuples; max by score; an empty beam: default."""
    beams = [(i, scores[i]) for i in range(scores.shape[0])]
    token, score = max(beams, key=lambda b: b[1], default=(-1, default_score))
    return token, score


@pytest.mark.parametrize("scores", [[0.1, 0.7, 0.2], [0.5, 0.5, 0.1], [0.9], []])
def test_hypothesis_tuples_and_ties_and_default(scores):
    s = np.asarray(scores, np.float32)
    static = d2s.to_static(best_hypothesis)
    default = rt.to_tensor(-1.0)
    e_tok, e_score = best_hypothesis(rt.to_tensor(s), default)
    g_tok, g_score = static(rt.to_tensor(s), default)
    want = int(np.argmax(s)) if len(s) else -1  # argmax: the first among ties, as Python
    assert e_tok == want
    assert int(g_tok) == e_tok
    np.testing.assert_allclose(float(g_score), float(e_score))


def chosen_loss(x):
    candidates = [rt.tanh(x), x * x, x * 0.5]
    return min(candidates, key=lambda c: c.mean()).sum()


@pytest.mark.parametrize("x", [[0.3, -0.2, 0.5], [2.0, 1.0, 3.0]])
def test_gradient_flows_through_the_chosen_item(x):
    x = np.asarray(x, np.float64)

    def ref(v):
        cands = [np.tanh(v), v * v, v * 0.5]
        return cands[int(np.argmin([c.mean() for c in cands]))].sum()

    want = numeric_grad(ref, x)
    static = d2s.to_static(chosen_loss)
    for fn in (chosen_loss, static):
        xt = rt.to_tensor(x.astype(np.float32), stop_gradient=False)
        fn(xt).backward()
        np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-4, atol=1e-6)
