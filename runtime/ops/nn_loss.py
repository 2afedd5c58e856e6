"""Losses that need an op of their own: the negative log-likelihood of hard class labels.

`nll_loss(logp, label, weight)` picks `-logp[..., label, ...]` along the class axis, weights
it per class, skips `ignore_index` and reduces ('none', 'sum', or 'mean' = weighted sum over
the total weight of the labels that are not ignored, like Paddle). It is linear in `logp`, so
its gradient `nll_loss_grad(g, ...)` is a constant tensor times `g`, and the gradient of that
with respect to `g` is `nll_loss` again: the pair closes under differentiation. Class weights
get no gradient (they are hyper-parameters).

`cross_entropy` is `log_softmax` followed by this op; the other losses (mse, l1, soft-label
cross entropy, binary cross entropy with logits) are compositions written in
`runtime.nn.functional.loss`.
"""
from __future__ import annotations

from ..dtypes import int32, int64
from . import infer as I
from .nn import check_float
from .registry import Meta, OpError, OpTypeError, bind, register

REDUCTIONS = ("none", "sum", "mean")


def _labels(xp, logp, label, axis, ignore_index):
    """(safe labels with the class axis removed, valid mask); raises on out-of-range labels."""
    if label.ndim == logp.ndim:
        label = label.squeeze(axis)
    valid = label != ignore_index
    safe = xp.where(valid, label, 0)
    n = logp.shape[axis]
    bad = valid & ((safe < 0) | (safe >= n))
    if bad.any():
        raise OpError(f"nll_loss: label value {int(label[bad].ravel()[0])} is out of range "
                      f"for {n} classes (valid: 0 .. {n - 1}, or ignore_index={ignore_index})")
    return safe, valid


def _weights(xp, logp, safe, valid, weight):
    w = valid.astype(logp.dtype)
    if weight is not None:
        w = w * weight.astype(logp.dtype, copy=False)[safe]
    return w


def _denominator(xp, w):
    total = w.sum()
    return total + (total == 0)  # an all-ignored batch gives 0, not nan (as Paddle)


def _nll_kernel(xp, logp, label, weight=None, axis=-1, ignore_index=-100, reduction="mean"):
    if reduction not in REDUCTIONS:
        raise ValueError(reduction)  # `bind` reports the infer rule's error
    axis %= logp.ndim
    safe, valid = _labels(xp, logp, label, axis, ignore_index)
    picked = xp.take_along_axis(logp, xp.expand_dims(safe, axis), axis).squeeze(axis)
    loss = -picked * _weights(xp, logp, safe, valid, weight)
    if reduction == "none":
        return loss.reshape(label.shape)
    total = loss.sum()
    if reduction == "mean":
        total = total / _denominator(xp, _weights(xp, logp, safe, valid, weight))
    return xp.asarray(total, dtype=logp.dtype)


def _nll_grad_kernel(xp, g, label, weight, logp, axis=-1, ignore_index=-100, reduction="mean"):
    axis %= logp.ndim
    safe, valid = _labels(xp, logp, label, axis, ignore_index)
    coef = -_weights(xp, logp, safe, valid, weight)
    if reduction == "mean":
        coef = coef / _denominator(xp, -coef)
    coef = coef * (g.reshape(safe.shape) if reduction == "none" else g)
    classes = xp.arange(logp.shape[axis]).reshape(
        [-1 if i == axis else 1 for i in range(logp.ndim)])
    onehot = xp.expand_dims(safe, axis) == classes
    return (onehot * xp.expand_dims(coef, axis)).astype(logp.dtype, copy=False)


def _nll_infer(logp, label, weight=None, axis=-1, ignore_index=-100, reduction="mean"):
    check_float("nll_loss", "input", logp)
    I.check_tensor("nll_loss", "label", label)
    if label.dtype not in (int64, int32):
        raise OpTypeError(f"nll_loss: label has dtype {label.dtype.name}; hard labels must be "
                          "int64 or int32 (use soft_label=True for probabilities)")
    if reduction not in REDUCTIONS:
        raise OpError(f"nll_loss: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    rank = len(logp.shape)
    if rank == 0:
        raise OpError("nll_loss: input must have a class axis, got a 0-d tensor")
    ax = I.norm_axis("nll_loss", axis, rank)
    want = tuple(d for i, d in enumerate(logp.shape) if i != ax)
    got = tuple(label.shape)
    if len(got) == rank:
        if got[ax] not in (1, -1):
            raise OpError(f"nll_loss: input has shape {I.fmt(logp.shape)} but label has shape "
                          f"{I.fmt(got)}; a label of the same rank must have size 1 on the "
                          f"class axis {ax}")
        got = got[:ax] + got[ax + 1:]
    if len(got) != len(want) or any(a != b and -1 not in (a, b) for a, b in zip(got, want)):
        raise OpError(f"nll_loss: input has shape {I.fmt(logp.shape)} but label has shape "
                      f"{I.fmt(label.shape)}; label must be {I.fmt(want)} (input without the "
                      f"class axis {ax}) or have size 1 on that axis")
    if weight is not None:
        check_float("nll_loss", "weight", weight)
        c = logp.shape[ax]
        if len(weight.shape) != 1 or -1 not in (c, weight.shape[0]) and weight.shape[0] != c:
            raise OpError(f"nll_loss: weight has shape {I.fmt(weight.shape)} but input has "
                          f"{c} classes on axis {ax}; weight must be [{c}]")
    return Meta(tuple(label.shape) if reduction == "none" else (), logp.dtype)


def _nll_grad(ins, outs, gs, a):
    logp, label, weight = ins
    return [bind(NLL_LOSS_GRAD, (gs[0], label, weight, logp), a), None, None]


NLL_LOSS = register("nll_loss", kernel=_nll_kernel, infer=_nll_infer, grad=_nll_grad,
                    amp="black", doc="Negative log-likelihood of hard labels (see module).")
NLL_LOSS_GRAD = register(
    "nll_loss_grad", kernel=_nll_grad_kernel,
    infer=lambda g, label, weight, logp, **a: Meta(logp.shape, logp.dtype),
    grad=lambda ins, outs, gs, a: [bind(NLL_LOSS, (gs[0], ins[1], ins[2]), a), None, None,
                                   None],
    amp="black", doc="Gradient of nll_loss with respect to logp, times g.")


def nll_loss(logp, label, weight=None, axis: int = -1, ignore_index: int = -100,
             reduction: str = "mean"):
    """Negative log-likelihood of integer labels along `axis` of `logp` (log-probabilities)."""
    return bind(NLL_LOSS, (logp, label, weight), {
        "axis": int(axis), "ignore_index": int(ignore_index), "reduction": reduction})


METHODS: dict = {}

__all__: list = []
