"""Distances and the losses built on margins and distances, with Paddle's signatures and
formulas: `F.pairwise_distance`, `F.triplet_margin_loss` and `F.cosine_embedding_loss`
(metric learning), `F.hinge_embedding_loss`, `F.soft_margin_loss`,
`F.multi_label_soft_margin_loss`, the likelihoods `F.poisson_nll_loss` and
`F.gaussian_nll_loss`, and detection's `F.sigmoid_focal_loss`. All are compositions of
ops, so gradients and converted code come from those ops."""
from __future__ import annotations

import math

from ...ops import logic as _logic
from ...ops import math as _math
from ...ops import nn as _nn
from ...ops import reduce as _reduce
from ...ops.registry import STATE
from ...program.debug_ops import raise_error
from ...static import nn as _static_nn
from .activation import log_sigmoid
from .loss import _reduce_loss, binary_cross_entropy_with_logits


def pairwise_distance(x, y, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                      name=None):
    """The p-norm of `x - y + epsilon` along the last axis (p = inf: the largest |.|, p = 0:
    how many entries are nonzero).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.pairwise_distance(rt.to_tensor([[3.0, 4.0]]), rt.zeros([1, 2]), epsilon=0.0).tolist()
    [5.0]
    """
    d = x - y + epsilon
    if p == 0:
        return _reduce.sum(_math.cast(d != 0, d.dtype), -1, keepdim=keepdim)
    return _reduce.norm(d, p=float(p), axis=-1, keepdim=keepdim)


def triplet_margin_loss(input, positive, negative, margin: float = 1.0, p: float = 2,
                        epsilon: float = 1e-6, swap: bool = False, reduction: str = "mean",
                        name=None):
    """max(d(input, positive) - d(input, negative) + margin, 0) with `pairwise_distance`;
    `swap=True` uses the smaller of d(input, negative) and d(positive, negative)."""
    near = pairwise_distance(input, positive, p, epsilon)
    far = pairwise_distance(input, negative, p, epsilon)
    if swap:
        far = _math.minimum(far, pairwise_distance(positive, negative, p, epsilon))
    return _reduce_loss(_nn.relu(near - far + margin), reduction, "triplet_margin_loss")


def cosine_embedding_loss(input1, input2, label, margin: float = 0, reduction: str = "mean",
                          name=None):
    """1 - cos(input1, input2) where label is 1, max(0, cos - margin) where it is -1 (the
    cosine along the last axis).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> a, b = rt.to_tensor([[1.0, 0.0], [1.0, 0.0]]), rt.to_tensor([[1.0, 0.0], [0.6, 0.8]])
    >>> [round(v, 4) for v in F.cosine_embedding_loss(
    ...     a, b, rt.to_tensor([1, -1]), reduction="none").tolist()]
    [0.0, 0.6]
    """
    dot = _reduce.sum(input1 * input2, -1)
    sq1 = _reduce.sum(input1 * input1, -1) + 1e-11
    sq2 = _reduce.sum(input2 * input2, -1) + 1e-11
    cos = dot / _math.sqrt(sq1 * sq2)
    zero = cos * 0.0
    loss = (_logic.where(label == 1, 1.0 - cos, zero)
            + _logic.where(label == -1, _nn.relu(cos - margin), zero))
    return _reduce_loss(loss, reduction, "cosine_embedding_loss")


def hinge_embedding_loss(input, label, margin: float = 1.0, reduction: str = "mean",
                         name=None):
    """`input` where label is 1, max(0, margin - input) where it is -1."""
    zero = input * 0.0
    loss = (_logic.where(label == 1, input, zero)
            + _logic.where(label == -1, _nn.relu(margin - input), zero))
    return _reduce_loss(loss, reduction, "hinge_embedding_loss")


def soft_margin_loss(input, label, reduction: str = "mean", name=None):
    """log(1 + exp(-label * input)) for labels 1 and -1 (computed as a softplus: finite for
    any input)."""
    if label.dtype != input.dtype:
        label = _math.cast(label, input.dtype)
    return _reduce_loss(_nn.softplus(-label * input), reduction, "soft_margin_loss")


def sigmoid_focal_loss(logit, label, normalizer=None, alpha: float = 0.25, gamma: float = 2.0,
                       reduction: str = "sum", name=None):
    """RetinaNet's focal loss of `logit` against 0/1 `label`: the sigmoid cross entropy
    times (1 - p_t) ** gamma, times alpha_t where alpha >= 0, divided by `normalizer` (a
    one-element tensor, e.g. the number of positives) when given.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> round(F.sigmoid_focal_loss(rt.to_tensor([0.0]), rt.to_tensor([1.0])).item(), 4)
    0.0433
    """
    if label.dtype != logit.dtype:
        label = _math.cast(label, logit.dtype)
    prob = _nn.sigmoid(logit)
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    p_t = prob * label + (1.0 - prob) * (1.0 - label)
    loss = loss * _math.pow(1.0 - p_t, gamma)
    if alpha >= 0:
        loss = loss * (alpha * label + (1.0 - alpha) * (1.0 - label))
    if normalizer is not None:
        loss = loss / normalizer
    return _reduce_loss(loss, reduction, "sigmoid_focal_loss")


def multi_label_soft_margin_loss(input, label, weight=None, reduction: str = "mean",
                                 name=None):
    """The per-class sigmoid cross entropy of `input` [N, C] against 0/1 `label`, averaged
    over the classes (each class scaled by `weight` when given), then reduced over N."""
    if label.dtype != input.dtype:
        label = _math.cast(label, input.dtype)
    per_class = -(label * log_sigmoid(input) + (1.0 - label) * log_sigmoid(-input))
    if weight is not None:
        per_class = per_class * weight
    return _reduce_loss(_reduce.mean(per_class, -1), reduction, "multi_label_soft_margin_loss")


def poisson_nll_loss(input, label, log_input: bool = True, full: bool = False,
                     epsilon: float = 1e-8, reduction: str = "mean", name=None):
    """The negative log-likelihood of `label` under a Poisson of rate exp(input)
    (`log_input`) or input: exp(input) - label * input, or input - label * log(input +
    epsilon); `full` adds Stirling's term label*log(label) - label + 0.5*log(2*pi*label)
    where label > 1."""
    if label.dtype != input.dtype:
        label = _math.cast(label, input.dtype)
    if log_input:
        loss = _math.exp(input) - label * input
    else:
        loss = input - label * _math.log(input + epsilon)
    if full:
        safe = _logic.where(label > 1, label, label * 0.0 + 1.0)
        stirling = safe * _math.log(safe) - safe + 0.5 * _math.log(safe * (2.0 * math.pi))
        loss = loss + _logic.where(label > 1, stirling, stirling * 0.0)
    return _reduce_loss(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, label, variance, full: bool = False, epsilon: float = 1e-6,
                      reduction: str = "mean", name=None):
    """The negative log-likelihood of `label` under a Gaussian of mean `input` and
    `variance` (clamped below at `epsilon`, which then gets no gradient): 0.5 * (log(var) +
    (input - label)**2 / var), plus 0.5 * log(2*pi) with `full`."""
    _refuse_negative(variance)
    var = _math.clip(variance, min=epsilon)
    loss = 0.5 * (_math.log(var) + (input - label) * (input - label) / var)
    if full:
        loss = loss + 0.5 * math.log(2.0 * math.pi)
    return _reduce_loss(loss, reduction, "gaussian_nll_loss")


def _refuse_negative(variance) -> None:
    """Paddle's ValueError for a negative variance: now, or where a program runs."""
    negative = _reduce.any(variance < 0)
    error = ValueError("gaussian_nll_loss: variance has negative entries")
    if STATE.builder is None:
        if bool(negative):
            raise error
        return
    _static_nn.cond(negative, lambda: raise_error(error), lambda: None)
