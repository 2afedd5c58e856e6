"""Loss functions: `F.cross_entropy`, `F.nll_loss`, `F.mse_loss`, `F.l1_loss`,
`F.binary_cross_entropy_with_logits`, with Paddle's signatures and reductions."""
from __future__ import annotations

from ...ops import math as _math
from ...ops import nn as _nn
from ...ops import nn_ctc as _ctc
from ...ops import nn_loss as _loss
from ...ops import reduce as _reduce
from ...ops import shape as _shape
from ...ops.registry import OpError


def _reduce_loss(loss, reduction: str, op: str):
    if reduction == "mean":
        return _reduce.mean(loss)
    if reduction == "sum":
        return _reduce.sum(loss)
    if reduction == "none":
        return loss
    raise OpError(f"{op}: reduction must be 'none', 'sum' or 'mean', got {reduction!r}")


def cross_entropy(input, label, weight=None, ignore_index: int = -100,
                  reduction: str = "mean", soft_label: bool = False, axis: int = -1,
                  use_softmax: bool = True, name=None):
    """Softmax cross entropy of logits `input` along `axis`.

    Hard labels (int64, the input's shape without `axis`, or with size 1 there) skip
    `ignore_index`; 'mean' divides by the total weight of the labels kept. Soft labels are
    probabilities of the input's shape. With `use_softmax=False`, input holds probabilities.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> loss = F.cross_entropy(rt.zeros([2, 4]), rt.to_tensor([1, 3]))
    >>> round(loss.item(), 4)
    1.3863
    """
    logp = _nn.log_softmax(input, axis) if use_softmax else _math.log(input)
    if not soft_label:
        return _loss.nll_loss(logp, label, weight, axis, ignore_index, reduction)
    loss = -_reduce.sum(label * logp, axis=axis, keepdim=True)
    if weight is None:
        return _reduce_loss(loss, reduction, "cross_entropy")
    shape = [-1 if i == axis % input.ndim else 1 for i in range(input.ndim)]
    w = _reduce.sum(label * _shape.reshape(weight, shape), axis=axis, keepdim=True)
    loss = loss * w
    if reduction == "mean":
        return _reduce.sum(loss) / _reduce.sum(w)
    return _reduce_loss(loss, reduction, "cross_entropy")


def nll_loss(input, label, weight=None, ignore_index: int = -100, reduction: str = "mean",
             name=None):
    """Negative log-likelihood of log-probabilities `input` [N, C, ...] at int labels
    [N, ...] (class axis 1).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.nll_loss(rt.to_tensor([[-1.0, -2.0]]), rt.to_tensor([1])).item()
    2.0
    """
    return _loss.nll_loss(input, label, weight, 1 if input.ndim > 1 else 0, ignore_index,
                          reduction)


def mse_loss(input, label, reduction: str = "mean", name=None):
    """(input - label)^2, reduced."""
    d = input - label
    return _reduce_loss(d * d, reduction, "mse_loss")


def l1_loss(input, label, reduction: str = "mean", name=None):
    """|input - label|, reduced."""
    return _reduce_loss(_math.abs(input - label), reduction, "l1_loss")


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction: str = "mean",
                                     pos_weight=None, name=None):
    """-[pos_weight * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x))], computed from
    the logits through softplus so that large |x| neither overflows nor loses precision.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> round(F.binary_cross_entropy_with_logits(rt.zeros([2]), rt.ones([2])).item(), 4)
    0.6931
    """
    if pos_weight is None:
        loss = _nn.softplus(logit) - logit * label
    else:
        loss = (1.0 - label) * logit + (1.0 + (pos_weight - 1.0) * label) * _nn.softplus(-logit)
    if weight is not None:
        loss = loss * weight
    return _reduce_loss(loss, reduction, "binary_cross_entropy_with_logits")


def binary_cross_entropy(input, label, weight=None, reduction: str = "mean", name=None):
    """-[y log(p) + (1 - y) log(1 - p)] for probabilities p; each log is clamped at -100
    (as Paddle) so p = 0 or 1 gives a finite loss. Prefer the `_with_logits` form.
    """
    log_p = _math.clip(_math.log(input), min=-100.0)
    log_q = _math.clip(_math.log(1.0 - input), min=-100.0)
    loss = -(label * log_p + (1.0 - label) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce_loss(loss, reduction, "binary_cross_entropy")


def softmax_with_cross_entropy(logits, label, soft_label: bool = False,
                               ignore_index: int = -100, numeric_stable_mode: bool = True,
                               return_softmax: bool = False, axis: int = -1, name=None):
    """Paddle's unreduced softmax cross entropy: the loss keeps `axis` with size 1.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.softmax_with_cross_entropy(rt.zeros([3, 4]), rt.to_tensor([[0], [1], [2]])).shape
    [3, 1]
    """
    if not soft_label and label.ndim == logits.ndim - 1:
        label = _shape.unsqueeze(label, axis % logits.ndim)
    loss = cross_entropy(logits, label, ignore_index=ignore_index, reduction="none",
                         soft_label=soft_label, axis=axis)
    return (loss, _nn.softmax(logits, axis)) if return_softmax else loss


def square_error_cost(input, label):
    """(input - label)^2, unreduced."""
    d = input - label
    return d * d


def smooth_l1_loss(input, label, reduction: str = "mean", delta: float = 1.0, name=None):
    """Huber loss: 0.5 d^2 where |d| < delta, delta * |d| - 0.5 delta^2 elsewhere
    (d = input - label)."""
    ad = _math.abs(input - label)
    quad = _math.minimum(ad, delta)
    return _reduce_loss(0.5 * quad * quad + delta * (ad - quad), reduction, "smooth_l1_loss")


def kl_div(input, label, reduction: str = "mean", name=None):
    """label * (log(label) - input) with `input` log-probabilities; zero where label is 0.
    'batchmean' divides the sum by the batch size."""
    loss = label * (_math.log(_math.maximum(label, 1e-30)) - input)
    if reduction == "batchmean":
        return _reduce.sum(loss) / float(input.shape[0])
    return _reduce_loss(loss, reduction, "kl_div")


def log_loss(input, label, epsilon: float = 1e-4, name=None):
    """-label * log(input + epsilon) - (1 - label) * log(1 - input + epsilon), unreduced, for
    probabilities `input` [N, 1] (Paddle's `F.log_loss`).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> round(F.log_loss(rt.to_tensor([[0.5]]), rt.to_tensor([[1.0]])).item(), 4)
    0.6929
    """
    return (-label * _math.log(input + epsilon)
            - (1.0 - label) * _math.log(1.0 - input + epsilon))


def margin_ranking_loss(input, other, label, margin: float = 0.0, reduction: str = "mean",
                        name=None):
    """max(0, -label * (input - other) + margin), reduced; label is 1 where `input` should
    rank higher and -1 where `other` should.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> x, y = rt.to_tensor([1.0, 2.0]), rt.to_tensor([2.0, 1.0])
    >>> F.margin_ranking_loss(x, y, rt.to_tensor([1.0, 1.0]), reduction="none").tolist()
    [1.0, 0.0]
    """
    return _reduce_loss(_nn.relu(margin - label * (input - other)), reduction,
                        "margin_ranking_loss")


def ctc_loss(log_probs, labels, input_lengths, label_lengths, blank: int = 0,
             reduction: str = "mean", norm_by_times: bool = False, name=None):
    """CTC loss of unnormalised scores `log_probs` [T, N, C] (softmax is applied along the
    class axis first, as Paddle's warp-ctc does) against padded `labels` [N, L].

    'mean' divides each sequence's loss by its label length, then averages (Paddle);
    `norm_by_times` divides the gradient (not the loss) by each input length.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> logits = rt.zeros([3, 1, 2])  # 3 frames, 1 sequence, blank + 1 class
    >>> loss = F.ctc_loss(logits, rt.to_tensor([[1]], dtype="int32"), rt.to_tensor([3]),
    ...                   rt.to_tensor([1]), reduction="none")
    >>> round(float(loss.numpy()[0]), 4)  # -log(6 alignments / 2**3)
    0.2877
    """
    loss = _ctc.ctc_loss(_nn.log_softmax(log_probs, -1), labels, input_lengths, label_lengths,
                         blank, norm_by_times)
    if reduction == "mean":
        return _reduce.mean(loss / _math.cast(label_lengths, loss.dtype))
    return _reduce_loss(loss, reduction, "ctc_loss")
