"""`rt.metric`: evaluation metrics with Paddle's names: the `accuracy` function and the
streaming `Metric` classes (`Accuracy`, `Auc`) that `rt.Model` reports."""
from __future__ import annotations

from ..ops import gather as _gather
from ..ops import logic as _logic
from ..ops import math as _math
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.inplace import write_into
from .metrics import Accuracy, Auc, Metric


def accuracy(input, label, k: int = 1, correct=None, total=None, name=None):
    """The fraction of rows of `input` ([N, C] scores) whose top-`k` classes contain the
    row's `label` ([N, 1] or [N] ints), a float32 0-d tensor (Paddle's `metric.accuracy`).
    `correct` / `total`, when given, receive the count of hits and N (written in place).

    >>> import runtime as rt
    >>> scores = rt.to_tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    >>> round(float(rt.metric.accuracy(scores, rt.to_tensor([[1], [1], [1]]))), 4)
    0.6667
    """
    if int(k) < 1:
        raise ValueError(f"accuracy: k must be >= 1, got {k}")
    _, top = _gather.topk(input, int(k), axis=-1)
    hits = _logic.equal(top, _math.cast(_shape.reshape(label, [-1, 1]), top.dtype))
    row_hit = _math.cast(_reduce.any(hits, axis=-1), "float32")
    acc = _reduce.mean(row_hit)
    if correct is not None or total is not None:
        if correct is not None:
            write_into(correct, _math.cast(_reduce.sum(row_hit), correct.dtype))
        if total is not None:
            n = _shape.shape(row_hit)[0]
            write_into(total, _math.cast(n, total.dtype))
    return acc


__all__ = ["Accuracy", "Auc", "Metric", "accuracy"]
