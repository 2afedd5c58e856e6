"""Streaming metrics with Paddle's `paddle.metric` interface: `compute` turns a batch's
outputs and labels into what `update` counts (it may run on tensors, inside the training
step), `update` adds a batch, `accumulate` reports everything since `reset`, `name` says what
`Model.fit` logs it as.

>>> import numpy as np, runtime as rt
>>> m = rt.metric.Accuracy()
>>> correct = m.compute(rt.to_tensor([[0.1, 0.9], [0.8, 0.2]]), rt.to_tensor([[1], [1]]))
>>> float(m.update(correct)), m.accumulate(), m.name()
(0.5, 0.5, ['acc'])
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ops import gather as _gather
from ..ops import logic as _logic
from ..ops import math as _math
from ..ops import reduce as _reduce
from ..ops import shape as _shape


def as_numpy(value) -> np.ndarray:
    """A tensor's, list's or array's values as a NumPy array."""
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


class Metric:
    """The base class: subclasses define `reset`, `update`, `accumulate` and `name`, and may
    override `compute` (by default it hands its arguments to `update` unchanged)."""

    def reset(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define reset()")

    def update(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define update()")

    def accumulate(self):
        raise NotImplementedError(f"{type(self).__name__} must define accumulate()")

    def name(self):
        raise NotImplementedError(f"{type(self).__name__} must define name()")

    def compute(self, *args):
        return args


class Accuracy(Metric):
    """Top-k classification accuracy. `compute(pred, label)` marks, per row, whether each of
    the `max(topk)` highest scores is the label ([N, maxk] float32 of 0/1); `label` is class
    ids ([N] or [N, 1]) or one-hot rows. With several `topk` the names are `acc_top1`, ...

    >>> import runtime as rt
    >>> m = rt.metric.Accuracy(topk=(1, 2))
    >>> pred = rt.to_tensor([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])
    >>> [float(a) for a in m.update(m.compute(pred, rt.to_tensor([2, 0])))]
    [0.5, 1.0]
    >>> m.name()
    ['acc_top1', 'acc_top2']
    """

    def __init__(self, topk: Sequence[int] = (1,), name: str | None = None):
        self.topk = tuple(int(k) for k in topk)
        if not self.topk or min(self.topk) < 1:
            raise ValueError(f"Accuracy: topk must be positive integers, got {topk}")
        self.maxk = max(self.topk)
        base = name or "acc"
        self._name = [f"{base}_top{k}" for k in self.topk] if self.maxk != 1 else [base]
        self.reset()

    def compute(self, pred, label, *args):
        _, top = _gather.topk(pred, self.maxk, axis=-1)
        if len(label.shape) > 1 and label.shape[-1] != 1:  # one-hot (or soft) labels
            label = _reduce.argmax(label, axis=-1, keepdim=True)
        else:
            label = _shape.reshape(label, [-1, 1])
        return _math.cast(_logic.equal(top, _math.cast(label, top.dtype)), "float32")

    def update(self, correct, *args):
        """Count a batch's `compute` result; returns its accuracy (a list with several k)."""
        correct = as_numpy(correct)
        samples = int(np.prod(correct.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            hits = float(correct[..., :k].sum())
            accs.append(hits / samples if samples else 0.0)
            self.total[i] += hits
            self.count[i] += samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self) -> None:
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        res = [t / c if c > 0 else 0.0 for t, c in zip(self.total, self.count, strict=True)]
        return res[0] if len(self.topk) == 1 else res

    def name(self) -> list:
        return self._name


class Auc(Metric):
    """Area under the ROC curve of a binary classifier, from histograms of the positive-class
    probability over `num_thresholds + 1` bins (Paddle's method: the trapezoid rule over the
    bins, so two scores in one bin count as a tie). `update(preds, labels)` takes [N, 2]
    class probabilities (column 1 is the positive class; an [N] or [N, 1] array is taken as
    that column) and [N] or [N, 1] 0/1 labels.

    >>> import numpy as np, runtime as rt
    >>> m = rt.metric.Auc()
    >>> m.update(np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6]]), np.array([0, 1, 0]))
    >>> m.accumulate()
    1.0
    """

    def __init__(self, curve: str = "ROC", num_thresholds: int = 4095, name: str = "auc"):
        if curve != "ROC":
            raise ValueError(f"Auc: only curve='ROC' is computed (as in Paddle), got {curve!r}")
        if int(num_thresholds) < 1:
            raise ValueError(f"Auc: num_thresholds must be >= 1, got {num_thresholds}")
        self.curve = curve
        self.num_thresholds = int(num_thresholds)
        self._name = name
        self.reset()

    def update(self, preds, labels) -> None:
        preds, labels = as_numpy(preds), as_numpy(labels).reshape(-1)
        score = preds[:, 1] if preds.ndim == 2 and preds.shape[1] == 2 else preds.reshape(-1)
        if len(score) != len(labels):
            raise ValueError(f"Auc.update: {len(score)} predictions but {len(labels)} labels")
        if score.size and (score.min() < 0 or score.max() > 1):
            raise ValueError("Auc.update: predictions must be probabilities in [0, 1]")
        bins = (score * self.num_thresholds).astype(np.int64)
        positive = labels.astype(bool)
        size = self.num_thresholds + 1
        self.stat_pos += np.bincount(bins[positive], minlength=size)
        self.stat_neg += np.bincount(bins[~positive], minlength=size)

    def reset(self) -> None:
        self.stat_pos = np.zeros(self.num_thresholds + 1, dtype=np.int64)
        self.stat_neg = np.zeros(self.num_thresholds + 1, dtype=np.int64)

    def accumulate(self) -> float:
        # From the highest bin down: the ROC curve's points are the running totals of
        # negatives (x) and positives (y); each bin adds one trapezoid.
        pos = np.cumsum(self.stat_pos[::-1]).astype(np.float64)
        neg = np.cumsum(self.stat_neg[::-1]).astype(np.float64)
        if pos[-1] == 0 or neg[-1] == 0:
            return 0.0
        prev_pos, prev_neg = np.concatenate([[0.0], pos[:-1]]), np.concatenate([[0.0], neg[:-1]])
        area = np.sum((neg - prev_neg) * (pos + prev_pos) / 2.0)
        return float(area / pos[-1] / neg[-1])

    def name(self) -> str:
        return self._name
