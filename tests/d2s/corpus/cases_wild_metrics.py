"""Evaluation code as training repos write it: accuracy and top-k accuracy, precision / recall /
F1 with Python counters, a confusion matrix, mean IoU for segmentation, a running-average meter
object and a metric dict with early stopping logic."""
import collections

import numpy as np

import runtime as paddle
import runtime.nn.functional as F

from .registry import case, f32, i64, rand

_LOGITS = f32([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])


@case(args=[(_LOGITS, i64([1, 0, 2, 1]), (1,)), (_LOGITS, i64([1, 0, 2, 1]), (1, 2)),
            (_LOGITS, i64([[1], [0], [2], [1]]), (1, 3))],
      ref=lambda x, y, ks: [np.float32(np.mean([y.reshape(-1)[i] in np.argsort(-x[i])[:k]
                                                 for i in range(len(x))])) for k in ks])
def topk_accuracy(output, target, topk=(1,)):
    """The ImageNet example's `accuracy`."""
    if target.ndim == 2:
        target = target.squeeze(-1)
    maxk = max(topk)
    batch_size = target.shape[0]
    _, pred = paddle.topk(output, maxk, axis=1)
    pred = pred.t() if hasattr(pred, "t") else pred.transpose([1, 0])
    correct = pred == target.reshape([1, -1]).expand_as(pred)
    res = []
    for k in topk:
        correct_k = correct[:k].reshape([-1]).astype("float32").sum(0)
        res.append(correct_k * (1.0 / batch_size))
    return res


@case(args=[(i64([1, 0, 1, 1, 0]), i64([1, 0, 0, 1, 1])), (i64([0, 0, 0]), i64([1, 1, 0])),
            (i64([1, 1]), i64([1, 1]))])
def binary_f1_with_counters(preds, labels):
    tp = fp = fn = 0
    for p, y in zip(preds, labels):
        if p == 1 and y == 1:
            tp += 1
        elif p == 1 and y == 0:
            fp += 1
        elif p == 0 and y == 1:
            fn += 1
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    if precision + recall == 0:
        return {"precision": precision, "recall": recall, "f1": 0.0}
    f1 = 2 * precision * recall / (precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1}


@case(args=[(i64([1, 0, 1, 1, 0]), i64([1, 0, 0, 1, 1])), (i64([0, 0, 0]), i64([1, 1, 0]))],
      batch=lambda b: (i64(np.arange(b) % 2), i64(np.arange(b) % 3 % 2)))
def binary_f1_vectorised(preds, labels, eps=1e-8):
    tp = ((preds == 1) & (labels == 1)).astype("float32").sum()
    fp = ((preds == 1) & (labels == 0)).astype("float32").sum()
    fn = ((preds == 0) & (labels == 1)).astype("float32").sum()
    precision = tp / (tp + fp + eps)
    recall = tp / (tp + fn + eps)
    f1 = 2 * precision * recall / (precision + recall + eps)
    if tp == 0:
        print("f1: no true positives")
    return f1


def _np_confusion(p, y, n):
    m = np.zeros((n, n), np.int64)
    for a, b in zip(y, p):
        m[a, b] += 1
    return m


@case(args=[(i64([0, 1, 2, 2, 1]), i64([0, 2, 2, 1, 1]), 3), (i64([0, 0]), i64([0, 0]), 2)],
      ref=lambda p, y, n: _np_confusion(p, y, n), stdout=("confusion: perfect",))
def confusion_matrix(preds, labels, num_classes):
    idx = labels * num_classes + preds
    counts = paddle.bincount(idx, minlength=num_classes * num_classes)
    matrix = counts.reshape([num_classes, num_classes])
    if paddle.diag(matrix).sum() == preds.shape[0]:
        print("confusion: perfect")
    return matrix


def _np_miou(pred, label, n, ignore):
    ious = []
    valid = label != ignore
    for c in range(n):
        p, t = (pred == c) & valid, (label == c) & valid
        union = (p | t).sum()
        if union == 0:
            continue
        ious.append((p & t).sum() / union)
    return np.float32(np.mean(ious)) if ious else np.float32(0)


_SEG_P = i64([[0, 1, 1], [2, 2, 0]])
_SEG_Y = i64([[0, 1, 2], [2, 255, 0]])


@case(args=[(_SEG_P, _SEG_Y, 3, 255), (_SEG_P, _SEG_Y, 4, 255), (_SEG_P * 0, _SEG_Y * 0, 2, 255)],
      ref=lambda p, y, n, ig: _np_miou(p, y, n, ig), rtol=1e-6)
def mean_iou(pred, label, num_classes, ignore_index=255):
    valid = label != ignore_index
    ious = []
    for c in range(num_classes):
        p = (pred == c) & valid
        t = (label == c) & valid
        union = (p | t).astype("float32").sum()
        if union == 0:
            continue
        inter = (p & t).astype("float32").sum()
        ious.append(inter / union)
    if len(ious) == 0:
        return paddle.zeros([])
    return paddle.stack(ious).mean()


class AverageMeter:
    """The meter of every PyTorch example: a Python object updated with tensors."""

    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


@case(args=[([rand(2, 3), rand(2, 3)], i64([0, 1])), ([rand(2, 3) * 10], i64([2, 2]))])
def eval_epoch_with_meters(batches, labels):
    losses = AverageMeter("loss")
    top1 = AverageMeter("acc@1")
    for logits in batches:
        loss = F.cross_entropy(logits, labels)
        acc = (logits.argmax(axis=1) == labels).astype("float32").mean()
        losses.update(loss, logits.shape[0])
        top1.update(acc, logits.shape[0])
        if loss > 5:
            print(f"batch loss too high in {losses.name}")
    return {losses.name: losses.avg, top1.name: top1.avg, "n": losses.count}


@case(args=[(f32([0.9, 0.8, 0.85, 0.7]), 2), (f32([0.5, 0.6, 0.7, 0.8]), 2),
            (f32([0.5, 0.5, 0.5, 0.5]), 1)])
def early_stopping(val_scores, patience, min_delta=0.01):
    best = None
    bad_epochs = 0
    history = collections.defaultdict(list)
    for epoch, score in enumerate(val_scores):
        history["score"].append(score)
        if best is None or score > best + min_delta:
            best = score
            bad_epochs = 0
        else:
            bad_epochs += 1
        if bad_epochs >= patience:
            return {"stopped_at": epoch, "best": best, "n": len(history["score"])}
    return {"stopped_at": -1, "best": best, "n": len(history["score"])}


@case(args=[(f32([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6]]), i64([1, 0, 0]), 0.5),
            (f32([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6]]), i64([1, 0, 0]), 0.99)])
def calibration_summary(probs, labels, threshold):
    """Per-class correctness counts in a Counter, keyed by Python class names."""
    names = ["neg", "pos"]
    conf, pred = probs.max(axis=1), probs.argmax(axis=1)
    confident = conf >= threshold
    summary = collections.Counter()
    for c, name in enumerate(names):
        is_c = (pred == c) & confident
        summary[name] += int(is_c.astype("int64").sum())
        summary[name + "_correct"] += int((is_c & (labels == c)).astype("int64").sum())
    if confident.any():
        coverage = confident.astype("float32").mean()
    else:
        coverage = paddle.zeros([])
    return dict(summary), coverage
