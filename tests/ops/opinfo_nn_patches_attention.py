"""OpInfos for `F.unfold`, `F.scaled_dot_product_attention`, `F.glu`, `F.log_loss` and
`F.margin_ranking_loss`: compositions of existing ops, checked here against loop-by-loop
NumPy references (values, finite-difference gradients, static vs eager)."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime.nn.functional as F


def _unfold_ref(x, kernel_sizes, strides=1, paddings=0, dilations=1):
    def two(v):
        return (v, v) if isinstance(v, int) else tuple(v)
    (kh, kw), (sh, sw), (dh, dw) = two(kernel_sizes), two(strides), two(dilations)
    pads = [paddings] * 4 if isinstance(paddings, int) else list(paddings)
    top, left, bottom, right = pads * 2 if len(pads) == 2 else pads
    xp = np.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)])
    n, c, h, w = xp.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c * kh * kw, oh * ow))
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                row = (ch * kh + i) * kw + j
                for a in range(oh):
                    for b in range(ow):
                        out[:, row, a * ow + b] = xp[:, ch, a * sh + i * dh, b * sw + j * dw]
    return out


def _unfold_samples(rng):
    return [Sample((randn(rng, 2, 3, 4, 4), 2)),
            Sample((randn(rng, 1, 2, 5, 6), [2, 3]), {"strides": 2, "paddings": 1}),
            Sample((randn(rng, 1, 2, 6, 5), 2), {"dilations": [2, 1], "paddings": [1, 0, 0, 2]}),
            Sample((randn(rng, 2, 1, 5, 5), 3), {"strides": [1, 2], "paddings": [1, 2]})]


def _sdpa_ref(q, k, v, attn_mask=None, is_causal=False):
    q, k, v = (np.swapaxes(t, 1, 2) for t in (q, k, v))  # [B, H, S, D]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    sq, sk = scores.shape[-2:]
    if is_causal:
        allowed = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
        scores = np.where(allowed, scores, -np.inf)
    if attn_mask is not None:
        scores = (np.where(attn_mask, scores, -np.inf) if attn_mask.dtype == bool
                  else scores + attn_mask)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return np.swapaxes(weights @ v, 1, 2)


def _sdpa_samples(rng):
    keep = rng.random((2, 1, 3, 5)) < 0.7
    keep[..., 0] = True  # every query sees at least one key
    return [Sample((randn(rng, 2, 3, 2, 4), randn(rng, 2, 3, 2, 4), randn(rng, 2, 3, 2, 4))),
            Sample((randn(rng, 1, 4, 3, 2), randn(rng, 1, 4, 3, 2), randn(rng, 1, 4, 3, 5)),
                   {"is_causal": True}),
            Sample((randn(rng, 2, 3, 2, 4), randn(rng, 2, 5, 2, 4), randn(rng, 2, 5, 2, 3)),
                   {"attn_mask": keep}),
            Sample((randn(rng, 2, 3, 1, 4), randn(rng, 2, 5, 1, 4), randn(rng, 2, 5, 1, 4)),
                   {"attn_mask": randn(rng, 3, 5)}),
            Sample((randn(rng, 1, 2, 2, 3), randn(rng, 1, 4, 2, 3), randn(rng, 1, 4, 2, 3)),
                   {"is_causal": True})]


def _glu_ref(x, axis=-1):
    a, b = np.split(x, 2, axis)
    return a / (1 + np.exp(-b))


def _log_loss_ref(p, y, epsilon=1e-4):
    return -y * np.log(p + epsilon) - (1 - y) * np.log(1 - p + epsilon)


def _margin_ref(x, y, label, margin=0.0, reduction="mean"):
    loss = np.maximum(0, -label * (x - y) + margin)
    return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]


def _margin_samples(rng):
    sign = rng.choice([-1.0, 1.0], size=(4, 3))
    return [Sample((randn(rng, 4, 3), randn(rng, 4, 3), sign), grad=(0, 1)),
            Sample((randn(rng, 5), randn(rng, 5), sign[0, :1].repeat(5)),
                   {"margin": 0.3, "reduction": "sum"}),
            Sample((randn(rng, 2, 3), randn(rng, 2, 3), sign[:2]), {"reduction": "none"})]


OPINFOS = [
    OpInfo("unfold", F.unfold, _unfold_ref, _unfold_samples, error_samples=[
        ErrorSample((np.ones((1, 1, 2, 2)), 3), {}, ValueError,
                    r"unfold: kernel \[3, 3\] with dilations \[1, 1\] does not fit into x of "
                    r"shape \[1, 1, 2, 2\]"),
        ErrorSample((np.ones((2, 2, 2)), 1), {}, ValueError,
                    r"unfold: x must be 4-D \[N, C, H, W\], got shape \[2, 2, 2\]")]),
    OpInfo("scaled_dot_product_attention", F.scaled_dot_product_attention, _sdpa_ref,
           _sdpa_samples, error_samples=[
               ErrorSample((np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4))), {},
                           ValueError, r"scaled_dot_product_attention: query, key and value "
                                       r"must be 4-D")]),
    OpInfo("glu", F.glu, _glu_ref,
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 6, 3),), {"axis": 1})],
           error_samples=[ErrorSample((np.ones((2, 3)),), {}, ValueError,
                                      r"glu: x has shape \[2, 3\]; its size on axis -1 must be "
                                      r"even")]),
    OpInfo("log_loss", F.log_loss, _log_loss_ref,
           lambda rng: [Sample((rng.uniform(0.1, 0.9, (4, 1)),
                                rng.integers(0, 2, (4, 1)).astype(np.float64)), grad=(0,)),
                        Sample((rng.uniform(0.1, 0.9, (3, 1)), rng.uniform(0, 1, (3, 1))),
                               {"epsilon": 1e-2})]),
    OpInfo("margin_ranking_loss", F.margin_ranking_loss, _margin_ref, _margin_samples),
]
