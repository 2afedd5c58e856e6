"""OpInfos for the `rt.nn.functional` names ported scripts call that session 24 added:
activations (`selu`, `celu`, `hardshrink`, `softshrink`, `tanhshrink`, `thresholded_relu`),
`conv1d_transpose`, `pixel_unshuffle`, `channel_shuffle`, `zeropad2d`, and the distance and
margin losses (`pairwise_distance`, `triplet_margin_loss`, `cosine_embedding_loss`,
`hinge_embedding_loss`, `soft_margin_loss`, `sigmoid_focal_loss`)."""
from __future__ import annotations

import numpy as np
from opinfo import OpInfo, Sample, randn

import runtime.nn.functional as F


def _kinked(rng, *shape, kinks=(0.0,)):
    """Values at least 0.1 away from each kink (finite differences stay on one side)."""
    x = rng.uniform(-3.0, 3.0, shape)
    for k in kinks:
        near = np.abs(x - k) < 0.1
        x = np.where(near, x + 0.25, x)
    return x


def _act_samples(kinks, **kwargs):
    def samples(rng):
        out = [Sample((_kinked(rng, 3, 4, kinks=kinks),)),
               Sample((_kinked(rng, 2, 1, 5, kinks=kinks),))]
        for kw in kwargs.get("variants", []):
            out.append(Sample((_kinked(rng, 6, kinks=kinks + tuple(kw.get("kinks", ()))),),
                              {k: v for k, v in kw.items() if k != "kinks"}))
        return out
    return samples


_SELU = (1.0507009873554804934193349852946, 1.6732632423543772848170429916717)


def _selu_ref(x, scale=_SELU[0], alpha=_SELU[1]):
    return scale * np.where(x > 0, x, alpha * np.expm1(x))


def _celu_ref(x, alpha=1.0):
    return np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(x / alpha))


def _conv1d_transpose_ref(x, w, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    n, cin, length = x.shape
    _, cout_g, k = w.shape
    full = np.zeros((n, cout_g * groups, (length - 1) * stride + dilation * (k - 1) + 1
                     + output_padding))
    per = cin // groups
    for g in range(groups):
        for i in range(length):
            for t in range(k):
                full[:, g * cout_g:(g + 1) * cout_g, i * stride + t * dilation] += np.einsum(
                    "nc,co->no", x[:, g * per:(g + 1) * per, i], w[g * per:(g + 1) * per, :, t])
    lo, hi = (padding, padding) if isinstance(padding, int) else padding
    return full[:, :, lo:full.shape[2] - hi]


def _conv1d_transpose_samples(rng):
    return [Sample((randn(rng, 2, 4, 5), randn(rng, 4, 3, 3))),
            Sample((randn(rng, 1, 4, 5), randn(rng, 4, 3, 4)), {"stride": 2, "padding": 1}),
            Sample((randn(rng, 1, 4, 3), randn(rng, 4, 1, 3)),
                   {"stride": 3, "padding": [1, 0], "output_padding": 1, "groups": 2}),
            Sample((randn(rng, 1, 2, 4), randn(rng, 2, 2, 2)), {"dilation": 2})]


def _pixel_unshuffle_ref(x, downscale_factor):
    n, c, h, w = x.shape
    r = downscale_factor
    return x.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4).reshape(
        n, c * r * r, h // r, w // r)


def _channel_shuffle_ref(x, groups, data_format="NCHW"):
    if data_format == "NHWC":
        return _channel_shuffle_ref(x.transpose(0, 3, 1, 2), groups).transpose(0, 2, 3, 1)
    n, c, h, w = x.shape
    return x.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)


def _zeropad2d_ref(x, padding):
    left, right, top, bottom = [padding] * 4 if isinstance(padding, int) else padding
    return np.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)])


def _pairwise_ref(x, y, p=2.0, epsilon=1e-6, keepdim=False):
    d = x - y + epsilon
    if p == np.inf:
        out = np.abs(d).max(-1, keepdims=keepdim)
    else:
        out = (np.abs(d) ** p).sum(-1, keepdims=keepdim) ** (1.0 / p)
    return out


def _pairwise_samples(rng):
    x, y = randn(rng, 4, 3), randn(rng, 4, 3)
    return [Sample((x, y)), Sample((x, y), {"p": 1.0}), Sample((x, y), {"p": 3.0}),
            Sample((x, y), {"p": np.inf, "keepdim": True}), Sample((x, y[0]))]


def _reduced(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](loss)


def _triplet_ref(a, pos, neg, margin=1.0, p=2, epsilon=1e-6, swap=False, reduction="mean"):
    near, far = _pairwise_ref(a, pos, p, epsilon), _pairwise_ref(a, neg, p, epsilon)
    if swap:
        far = np.minimum(far, _pairwise_ref(pos, neg, p, epsilon))
    return _reduced(np.maximum(near - far + margin, 0), reduction)


def _triplet_samples(rng):
    a = randn(rng, 5, 3)
    pos, neg = a + 0.3 * randn(rng, 5, 3), a + 1.5 * randn(rng, 5, 3)
    return [Sample((a, pos, neg)), Sample((a, pos, neg), {"margin": 2.0, "reduction": "none"}),
            Sample((a, pos, neg), {"p": 1, "swap": True, "reduction": "sum"})]


def _cosine_ref(x1, x2, label, margin=0, reduction="mean"):
    cos = (x1 * x2).sum(-1) / np.sqrt(((x1 * x1).sum(-1) + 1e-11) * ((x2 * x2).sum(-1) + 1e-11))
    return _reduced(np.where(label == 1, 1 - cos, np.maximum(cos - margin, 0)), reduction)


def _cosine_samples(rng):
    x1, x2 = randn(rng, 6, 4), randn(rng, 6, 4)
    label = np.array([1, -1, 1, -1, -1, 1])
    return [Sample((x1, x2, label)), Sample((x1, x2, label), {"margin": -0.8,
                                                               "reduction": "none"})]


def _hinge_samples(rng):
    x = _kinked(rng, 3, 4, kinks=(1.0, 0.5))
    label = rng.choice([-1.0, 1.0], (3, 4))
    return [Sample((x, label)), Sample((x, label), {"margin": 0.5, "reduction": "sum"})]


def _hinge_ref(x, label, margin=1.0, reduction="mean"):
    return _reduced(np.where(label == 1, x, np.maximum(margin - x, 0)), reduction)


def _soft_margin_samples(rng):
    label = rng.choice([-1.0, 1.0], (3, 4))
    return [Sample((randn(rng, 3, 4) * 3, label)),
            Sample((randn(rng, 3, 4), label), {"reduction": "none"})]


def _focal_ref(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum"):
    p = 1 / (1 + np.exp(-logit))
    ce = np.maximum(logit, 0) - logit * label + np.log1p(np.exp(-np.abs(logit)))
    p_t = p * label + (1 - p) * (1 - label)
    loss = ce * (1 - p_t) ** gamma
    if alpha >= 0:
        loss = loss * (alpha * label + (1 - alpha) * (1 - label))
    if normalizer is not None:
        loss = loss / normalizer
    return _reduced(loss, reduction)


def _focal_samples(rng):
    logit = randn(rng, 4, 3) * 2
    label = rng.integers(0, 2, (4, 3)).astype(np.float64)
    return [Sample((logit, label)), Sample((logit, label, np.array([3.0])), {"gamma": 1.5}),
            Sample((logit, label), {"alpha": -1.0, "reduction": "mean"})]


OPINFOS = [
    OpInfo("selu", F.selu, _selu_ref, _act_samples((0.0,), variants=[{"alpha": 2.0}])),
    OpInfo("celu", F.celu, _celu_ref, _act_samples((0.0,), variants=[{"alpha": 0.5}])),
    OpInfo("hardshrink", F.hardshrink, lambda x, threshold=0.5: np.where(
        np.abs(x) > threshold, x, 0), _act_samples((0.5, -0.5), variants=[
            {"threshold": 1.2, "kinks": (1.2, -1.2)}])),
    OpInfo("softshrink", F.softshrink, lambda x, threshold=0.5: np.where(
        x > threshold, x - threshold, np.where(x < -threshold, x + threshold, 0)),
        _act_samples((0.5, -0.5), variants=[{"threshold": 1.2, "kinks": (1.2, -1.2)}])),
    OpInfo("tanhshrink", F.tanhshrink, lambda x: x - np.tanh(x), _act_samples(())),
    OpInfo("thresholded_relu", F.thresholded_relu, lambda x, threshold=1.0, value=0.0:
           np.where(x > threshold, x, value), _act_samples((1.0,), variants=[
               {"threshold": -0.5, "value": 0.5, "kinks": (-0.5,)}])),
    OpInfo("conv1d_transpose", F.conv1d_transpose, _conv1d_transpose_ref,
           _conv1d_transpose_samples),
    OpInfo("pixel_unshuffle", F.pixel_unshuffle, _pixel_unshuffle_ref,
           lambda rng: [Sample((randn(rng, 2, 3, 4, 6), 2))]),
    OpInfo("channel_shuffle", F.channel_shuffle, _channel_shuffle_ref, lambda rng: [
        Sample((randn(rng, 2, 6, 2, 3), 3)),
        Sample((randn(rng, 1, 2, 3, 4), 2), {"data_format": "NHWC"})]),
    OpInfo("zeropad2d", F.zeropad2d, _zeropad2d_ref, lambda rng: [
        Sample((randn(rng, 1, 2, 3, 4), 1)), Sample((randn(rng, 2, 1, 2, 2), [0, 2, 1, 3]))]),
    OpInfo("pairwise_distance", F.pairwise_distance, _pairwise_ref, _pairwise_samples),
    OpInfo("triplet_margin_loss", F.triplet_margin_loss, _triplet_ref, _triplet_samples),
    OpInfo("cosine_embedding_loss", F.cosine_embedding_loss, _cosine_ref, _cosine_samples,
           grad=(0, 1)),
    OpInfo("hinge_embedding_loss", F.hinge_embedding_loss, _hinge_ref, _hinge_samples,
           grad=(0,)),
    OpInfo("soft_margin_loss", F.soft_margin_loss, lambda x, label, reduction="mean": _reduced(
        np.logaddexp(0, -label * x), reduction), _soft_margin_samples, grad=(0,)),
    OpInfo("sigmoid_focal_loss", F.sigmoid_focal_loss, _focal_ref, _focal_samples, grad=(0,)),
]


def _amp1d_ref(x, output_size, return_mask=False):
    n, c, length = x.shape
    out = np.empty((n, c, output_size))
    mask = np.empty((n, c, output_size), np.int64)
    for i in range(output_size):
        lo, hi = (i * length) // output_size, -((-(i + 1) * length) // output_size)
        out[..., i] = x[..., lo:hi].max(-1)
        mask[..., i] = lo + x[..., lo:hi].argmax(-1)
    return (out, mask) if return_mask else out


def _maxout_ref(x, groups, axis=1):
    axis %= x.ndim
    shape = x.shape[:axis] + (x.shape[axis] // groups, groups) + x.shape[axis + 1:]
    return x.reshape(shape).max(axis + 1)


def _lrn_ref(x, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW"):
    if data_format[1] != "C":
        moved = np.moveaxis(x, -1, 1)
        return np.moveaxis(_lrn_ref(moved, size, alpha, beta, k), 1, -1)
    c, sq, out = x.shape[1], x * x, np.empty_like(x)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        out[:, i] = x[:, i] / (k + alpha / size * sq[:, lo:hi].sum(1)) ** beta
    return out


def _log_sigmoid(x):
    return -np.logaddexp(0, -x)


def _mlsm_ref(x, label, weight=None, reduction="mean"):
    per = -(label * _log_sigmoid(x) + (1 - label) * _log_sigmoid(-x))
    if weight is not None:
        per = per * weight
    return _reduced(per.mean(-1), reduction)


def _poisson_ref(x, label, log_input=True, full=False, epsilon=1e-8, reduction="mean"):
    loss = np.exp(x) - label * x if log_input else x - label * np.log(x + epsilon)
    if full:
        safe = np.where(label > 1, label, 1.0)
        loss = loss + np.where(label > 1, safe * np.log(safe) - safe
                               + 0.5 * np.log(2 * np.pi * safe), 0.0)
    return _reduced(loss, reduction)


def _gaussian_ref(x, label, var, full=False, epsilon=1e-6, reduction="mean"):
    var = np.maximum(var, epsilon)
    loss = 0.5 * (np.log(var) + (x - label) ** 2 / var)
    if full:
        loss = loss + 0.5 * np.log(2 * np.pi)
    return _reduced(loss, reduction)


OPINFOS += [
    OpInfo("adaptive_max_pool1d", F.adaptive_max_pool1d, _amp1d_ref, lambda rng: [
        Sample((rng.permutation(42).reshape(2, 3, 7) * 0.25, 3)),
        Sample((rng.permutation(30).reshape(1, 3, 10) * 0.25, 4), {"return_mask": True})]),
    OpInfo("maxout", F.maxout, _maxout_ref, lambda rng: [
        Sample((rng.permutation(48).reshape(2, 6, 4) * 0.25, 3)),
        Sample((rng.permutation(48).reshape(2, 3, 8) * 0.25, 2), {"axis": -1})]),
    OpInfo("local_response_norm", F.local_response_norm, _lrn_ref, lambda rng: [
        Sample((randn(rng, 2, 5, 3, 2), 3)), Sample((randn(rng, 2, 4, 3), 2, 0.5, 0.5, 2.0)),
        Sample((randn(rng, 1, 2, 2, 6), 5), {"alpha": 0.1, "data_format": "NHWC"})]),
    OpInfo("multi_label_soft_margin_loss", F.multi_label_soft_margin_loss, _mlsm_ref,
           lambda rng: [Sample((randn(rng, 4, 3), rng.integers(0, 2, (4, 3)).astype(float))),
                        Sample((randn(rng, 4, 3), rng.integers(0, 2, (4, 3)).astype(float),
                                rng.uniform(0.5, 2, (3,))), {"reduction": "sum"})]),
    OpInfo("poisson_nll_loss", F.poisson_nll_loss, _poisson_ref, lambda rng: [
        Sample((randn(rng, 3, 4), rng.integers(0, 5, (3, 4)).astype(float))),
        Sample((rng.uniform(0.5, 3, (3, 4)), rng.integers(0, 5, (3, 4)).astype(float)),
               {"log_input": False, "full": True, "reduction": "none"})], grad=(0,)),
    OpInfo("gaussian_nll_loss", F.gaussian_nll_loss, _gaussian_ref, lambda rng: [
        Sample((randn(rng, 3, 4), randn(rng, 3, 4), rng.uniform(0.5, 2, (3, 4)))),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4), rng.uniform(0.5, 2, (3, 1))),
               {"full": True, "reduction": "sum"})]),
]
