"""Loss layers: hold the options, call `rt.nn.functional` (Paddle arguments and defaults).

`reduction` is 'mean' (default), 'sum' or 'none' everywhere.
"""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


def _check_reduction(layer: str, reduction: str) -> str:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{layer}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    return reduction


class CrossEntropyLoss(Layer):
    """Softmax cross entropy between logits and integer labels (or soft labels with
    `soft_label=True`), with optional class `weight` and `ignore_index`.

    >>> import runtime as rt
    >>> loss = rt.nn.CrossEntropyLoss()
    >>> loss(rt.randn([4, 3]), rt.to_tensor([0, 2, 1, 2])).shape
    []
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 soft_label: bool = False, axis: int = -1, use_softmax: bool = True,
                 label_smoothing: float = 0.0, name=None):
        super().__init__()
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got "
                             f"{label_smoothing}")
        self.label_smoothing = float(label_smoothing)
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction = _check_reduction("CrossEntropyLoss", reduction)
        self.soft_label, self.axis, self.use_softmax = soft_label, axis, use_softmax

    def forward(self, input, label):
        soft_label = self.soft_label
        if self.label_smoothing > 0.0:  # as Paddle: one-hot (if needed), smooth, soft labels
            if len(label.shape) == len(input.shape) - 1 or (
                    not soft_label and label.shape[self.axis] == 1):
                if len(label.shape) == len(input.shape):
                    label = label.squeeze(self.axis)
                label = F.one_hot(label, input.shape[self.axis])
            label = F.label_smooth(label, epsilon=self.label_smoothing).astype(input.dtype)
            soft_label = True
        return F.cross_entropy(input, label, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, soft_label=soft_label,
                               axis=self.axis, use_softmax=self.use_softmax)


class NLLLoss(Layer):
    """Negative log likelihood of integer labels given log-probabilities (class axis 1)."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 name=None):
        super().__init__()
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction = _check_reduction("NLLLoss", reduction)

    def forward(self, input, label):
        return F.nll_loss(input, label, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(Layer):
    """(input - label) ** 2, reduced.

    >>> import runtime as rt
    >>> float(rt.nn.MSELoss()(rt.to_tensor([1.0, 3.0]), rt.to_tensor([0.0, 1.0])))
    2.5
    """

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _check_reduction("MSELoss", reduction)

    def forward(self, input, label):
        return F.mse_loss(input, label, reduction=self.reduction)


class L1Loss(Layer):
    """|input - label|, reduced."""

    def __init__(self, reduction: str = "mean", name=None):
        super().__init__()
        self.reduction = _check_reduction("L1Loss", reduction)

    def forward(self, input, label):
        return F.l1_loss(input, label, reduction=self.reduction)


class BCEWithLogitsLoss(Layer):
    """Sigmoid binary cross entropy on logits, computed stably; optional element `weight`
    and `pos_weight` (the weight of positive examples)."""

    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None, name=None):
        super().__init__()
        self.weight, self.pos_weight = weight, pos_weight
        self.reduction = _check_reduction("BCEWithLogitsLoss", reduction)

    def forward(self, logit, label):
        return F.binary_cross_entropy_with_logits(logit, label, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class BCELoss(Layer):
    """Binary cross entropy on probabilities (after a sigmoid); logs are clamped at -100."""

    def __init__(self, weight=None, reduction: str = "mean", name=None):
        super().__init__()
        self.weight = weight
        self.reduction = _check_reduction("BCELoss", reduction)

    def forward(self, input, label):
        return F.binary_cross_entropy(input, label, weight=self.weight, reduction=self.reduction)


class SmoothL1Loss(Layer):
    """Huber loss: 0.5 d**2 where |d| < delta, else delta * |d| - 0.5 delta**2."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0, is_huber: bool = True,
                 name=None):
        super().__init__()
        self.reduction, self.delta = _check_reduction("SmoothL1Loss", reduction), delta
        self.is_huber = bool(is_huber)  # False: the Huber loss divided by delta (Paddle)

    def forward(self, input, label):
        loss = F.smooth_l1_loss(input, label, reduction=self.reduction, delta=self.delta)
        return loss if self.is_huber else loss / self.delta


class KLDivLoss(Layer):
    """label * (log(label) - input) for log-probability inputs; reduction may also be
    'batchmean'."""

    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        if reduction != "batchmean":
            _check_reduction("KLDivLoss", reduction)
        self.reduction, self.log_target = reduction, bool(log_target)

    def forward(self, input, label):
        if self.log_target:  # label holds log-probabilities: exp(t) * (t - input)
            loss = label.exp() * (label - input)
            if self.reduction == "batchmean":
                return loss.sum() / float(input.shape[0])
            return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[self.reduction]
        return F.kl_div(input, label, reduction=self.reduction)


class MarginRankingLoss(Layer):
    """max(0, -label * (input - other) + margin), reduced (see `F.margin_ranking_loss`).

    >>> import runtime as rt
    >>> loss = rt.nn.MarginRankingLoss(margin=0.5)
    >>> loss(rt.to_tensor([1.0]), rt.to_tensor([1.0]), rt.to_tensor([1.0])).item()
    0.5
    """

    def __init__(self, margin: float = 0.0, reduction: str = "mean", name=None):
        super().__init__()
        self.margin = margin
        self.reduction = _check_reduction("MarginRankingLoss", reduction)

    def forward(self, input, other, label):
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class CTCLoss(Layer):
    """CTC loss for speech and handwriting recognition (see `F.ctc_loss`): forward(log_probs
    [T, N, C] unnormalised, labels [N, L], input_lengths [N], label_lengths [N],
    norm_by_times=False).

    >>> import runtime as rt
    >>> ctc = rt.nn.CTCLoss(blank=0)
    >>> loss = ctc(rt.randn([5, 2, 4]), rt.to_tensor([[1, 2], [3, 0]], dtype="int32"),
    ...            rt.to_tensor([5, 4]), rt.to_tensor([2, 1]))
    >>> loss.shape
    []
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", name=None):
        super().__init__()
        self.blank = blank
        self.reduction = _check_reduction("CTCLoss", reduction)

    def forward(self, log_probs, labels, input_lengths, label_lengths,
                norm_by_times: bool = False):
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank,
                          self.reduction, norm_by_times)
