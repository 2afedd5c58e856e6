"""Layers over `rt.nn.functional`'s distances and margin losses (metric learning):
`PairwiseDistance`, `TripletMarginLoss`, `CosineEmbeddingLoss`, `HingeEmbeddingLoss`,
`SoftMarginLoss`, `MultiLabelSoftMarginLoss`, and the likelihoods `PoissonNLLLoss` and
`GaussianNLLLoss`, with Paddle's arguments."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer
from .loss import _check_reduction


class PairwiseDistance(Layer):
    """The p-norm of `x - y + epsilon` along the last axis (see `F.pairwise_distance`).

    >>> import runtime as rt
    >>> rt.nn.PairwiseDistance(epsilon=0.0)(rt.to_tensor([[3.0, 4.0]]), rt.zeros([1, 2])).tolist()
    [5.0]
    """

    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                 name=None):
        super().__init__()
        self.p, self.epsilon, self.keepdim = p, epsilon, keepdim

    def forward(self, x, y):
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self) -> str:
        return f"p={self.p}, epsilon={self.epsilon}, keepdim={self.keepdim}"


class TripletMarginLoss(Layer):
    """max(d(input, positive) - d(input, negative) + margin, 0), reduced (see
    `F.triplet_margin_loss`)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, epsilon: float = 1e-6,
                 swap: bool = False, reduction: str = "mean", name=None):
        super().__init__()
        self.margin, self.p, self.epsilon, self.swap = margin, p, epsilon, swap
        self.reduction = _check_reduction("TripletMarginLoss", reduction)

    def forward(self, input, positive, negative):
        return F.triplet_margin_loss(input, positive, negative, self.margin, self.p,
                                     self.epsilon, self.swap, self.reduction)


class CosineEmbeddingLoss(Layer):
    """1 - cos where label is 1, max(0, cos - margin) where it is -1, reduced."""

    def __init__(self, margin: float = 0, reduction: str = "mean", name=None):
        super().__init__()
        self.margin = margin
        self.reduction = _check_reduction("CosineEmbeddingLoss", reduction)

    def forward(self, input1, input2, label):
        return F.cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class HingeEmbeddingLoss(Layer):
    """`input` where label is 1, max(0, margin - input) where it is -1, reduced."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean", name=None):
        super().__init__()
        self.margin = margin
        self.reduction = _check_reduction("HingeEmbeddingLoss", reduction)

    def forward(self, input, label):
        return F.hinge_embedding_loss(input, label, self.margin, self.reduction)


class SoftMarginLoss(Layer):
    """log(1 + exp(-label * input)), reduced."""

    def __init__(self, reduction: str = "mean", name=None):
        super().__init__()
        self.reduction = _check_reduction("SoftMarginLoss", reduction)

    def forward(self, input, label):
        return F.soft_margin_loss(input, label, self.reduction)


class MultiLabelSoftMarginLoss(Layer):
    """The per-class sigmoid cross entropy averaged over classes, reduced (see
    `F.multi_label_soft_margin_loss`)."""

    def __init__(self, weight=None, reduction: str = "mean", name=None):
        super().__init__()
        self.weight = weight
        self.reduction = _check_reduction("MultiLabelSoftMarginLoss", reduction)

    def forward(self, input, label):
        return F.multi_label_soft_margin_loss(input, label, self.weight, self.reduction)


class PoissonNLLLoss(Layer):
    """The Poisson negative log-likelihood (see `F.poisson_nll_loss`)."""

    def __init__(self, log_input: bool = True, full: bool = False, epsilon: float = 1e-8,
                 reduction: str = "mean", name=None):
        super().__init__()
        self.log_input, self.full, self.epsilon = log_input, full, epsilon
        self.reduction = _check_reduction("PoissonNLLLoss", reduction)

    def forward(self, input, label):
        return F.poisson_nll_loss(input, label, self.log_input, self.full, self.epsilon,
                                  self.reduction)


class GaussianNLLLoss(Layer):
    """The Gaussian negative log-likelihood (see `F.gaussian_nll_loss`)."""

    def __init__(self, full: bool = False, epsilon: float = 1e-6, reduction: str = "mean",
                 name=None):
        super().__init__()
        self.full, self.epsilon = full, epsilon
        self.reduction = _check_reduction("GaussianNLLLoss", reduction)

    def forward(self, input, label, variance):
        return F.gaussian_nll_loss(input, label, variance, self.full, self.epsilon,
                                   self.reduction)
