"""Issue 36's Tensor methods in model code as speech and recommendation models write it:
eager vs converted vs NumPy, with inputs that take different branches of one program."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt


def masked_scores(scores, lengths):
    """Attention scores with padded key positions filled, normalised per row."""
    batch, steps = scores.shape[0], scores.shape[-1]
    positions = rt.arange(steps).view([1, steps])
    pad = positions >= lengths.view_as(rt.zeros([batch, 1], "int64"))
    filled = scores.masked_fill(pad, -1e9)
    if filled.max() > 0:
        filled = filled - filled.max()
    weights = rt.nn.functional.softmax(filled, axis=-1)
    spread = weights.cumprod(dim=-1).reciprocal().clip(0, 10.0)
    return weights, spread, weights.median(axis=-1), weights.quantile(0.75, axis=-1)


def _numpy(scores, lengths):
    pad = np.arange(scores.shape[-1])[None, :] >= lengths[:, None]
    filled = np.where(pad, -1e9, scores)
    if filled.max() > 0:
        filled = filled - filled.max()
    e = np.exp(filled - filled.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    spread = np.clip(1.0 / np.cumprod(w, axis=-1), 0, 10.0)
    return w, spread, np.median(w, axis=-1), np.quantile(w, 0.75, axis=-1)


CASES = [(np.array([[0.5, 1.5, -0.2, 0.3], [2.0, -1.0, 0.1, 0.7]]), np.array([3, 4])),
         (np.array([[-0.5, -1.5, -0.2, -0.3], [-2.0, -1.0, -0.1, -0.7]]), np.array([2, 1]))]


@pytest.mark.parametrize("convert", [False, True])
def test_methods_match_numpy_eager_and_converted(convert):
    fn = d2s.to_static(masked_scores) if convert else masked_scores
    for scores, lengths in CASES:  # the max > 0 branch is taken for one case only
        got = fn(rt.to_tensor(scores), rt.to_tensor(lengths))
        want = _numpy(scores, lengths)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-10, atol=1e-12)
    if convert:
        assert len(fn.program_cache) == 1


def _differentiable_outputs(scores, lengths):
    # (`spread` is left out: its reciprocal is inf where the weights are 0, and a converted
    # call's backward sends a zero gradient through outputs that got none: 0 * inf)
    weights, _, median, upper = masked_scores(scores, lengths)
    return weights, median, upper


def test_gradient_through_the_methods_matches_finite_differences():
    scores, lengths = CASES[0]
    static = d2s.to_static(_differentiable_outputs)

    def loss_np(s):
        w, _, med, q = _numpy(s, lengths)
        return float((w * np.arange(4)).sum() + med.sum() + 2 * q.sum())

    want = numeric_grad(loss_np, scores)
    for fn in (_differentiable_outputs, static):
        x = rt.to_tensor(scores, stop_gradient=False)
        w, med, q = fn(x, rt.to_tensor(lengths))
        ((w * rt.arange(4, dtype="float64")).sum() + med.sum() + 2 * q.sum()).backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-7)


def test_view_with_a_dtype_is_refused_clearly():
    with pytest.raises(TypeError, match=r"view: reinterpreting the bytes of a tensor as int32 "
                                        r"is not supported"):
        rt.ones([2]).view("int32")
