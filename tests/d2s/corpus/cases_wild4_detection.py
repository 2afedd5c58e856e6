"""Detection and segmentation code as mmdet / YOLO / torchvision-reference repos write it:
NMS by hand with a `while` over a tensor of remaining boxes, delta-to-box decoding with a
clamp, anchor matching by IoU with a Python threshold dict, per-class NMS with a `for` over a
class list, dice / focal / cross-entropy losses with masks and `ignore_index`, per-pixel
argmax with a mIoU computed by a Python loop over classes."""
from collections import namedtuple

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


def _iou(box, boxes):
    x1 = paddle.maximum(box[0], boxes[:, 0])
    y1 = paddle.maximum(box[1], boxes[:, 1])
    x2 = paddle.minimum(box[2], boxes[:, 2])
    y2 = paddle.minimum(box[3], boxes[:, 3])
    inter = paddle.clip(x2 - x1, min=0) * paddle.clip(y2 - y1, min=0)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / (area + areas - inter + 1e-9)


_BOXES = f32([[0, 0, 2, 2], [0.1, 0.1, 2.1, 2.1], [3, 3, 4, 4], [3.1, 3, 4, 4.1]])


@case(args=[(_BOXES, f32([0.9, 0.8, 0.7, 0.95]), 0.5),
            (_BOXES, f32([0.9, 0.8, 0.7, 0.95]), 0.99)])
def nms_while_loop(boxes, scores, iou_thr):
    """Greedy NMS: sort once, then pop the best box while any remain, dropping the ones that
    overlap it; the kept indices go into a Python list."""
    order = paddle.argsort(scores, descending=True)
    boxes = boxes[order]
    keep = []
    alive = paddle.ones([boxes.shape[0]], dtype="bool")
    i = 0
    while i < boxes.shape[0]:
        if alive[i]:
            keep.append(order[i])
            ious = _iou(boxes[i], boxes)
            alive = alive & ((ious <= iou_thr) | (paddle.arange(boxes.shape[0]) <= i))
        i += 1
    return paddle.stack(keep), len(keep)


@case(args=[(f32([[0, 0, 4, 4], [2, 2, 6, 8]]), f32([[0.1, 0.2, 0.0, 0.0], [0, 0, 10, -10]]),
             8.0),
            (f32([[1, 1, 4, 4]]), f32([[0.05, -0.05, 0.1, 0.1]]), 100.0)])
def decode_deltas_with_clamp(anchors, deltas, max_size):
    """mmdet's DeltaXYWHBBoxCoder.decode: dw/dh clamped by log(1000/16), boxes clipped to the
    image only when some box leaves it."""
    max_ratio = abs(np.log(16.0 / 1000))
    widths = anchors[:, 2] - anchors[:, 0]
    heights = anchors[:, 3] - anchors[:, 1]
    cx = anchors[:, 0] + 0.5 * widths
    cy = anchors[:, 1] + 0.5 * heights
    dx, dy, dw, dh = deltas[:, 0], deltas[:, 1], deltas[:, 2], deltas[:, 3]
    dw = paddle.clip(dw, -max_ratio, max_ratio)
    dh = paddle.clip(dh, -max_ratio, max_ratio)
    pcx, pcy = cx + dx * widths, cy + dy * heights
    pw, ph = widths * dw.exp(), heights * dh.exp()
    out = paddle.stack([pcx - pw / 2, pcy - ph / 2, pcx + pw / 2, pcy + ph / 2], axis=-1)
    if (out < 0).any() or (out > max_size).any():
        out = paddle.clip(out, 0.0, max_size)
    return out


Match = namedtuple("Match", ["labels", "num_pos"])


@case(args=[(f32([[0, 0, 2, 2], [3, 3, 5, 5], [0, 0, 1, 1]]), f32([[0, 0, 2, 2.2]]),
             {"pos": 0.5, "neg": 0.3}),
            (f32([[0, 0, 2, 2], [3, 3, 5, 5]]), f32([[10, 10, 11, 11]]),
             {"pos": 0.5, "neg": 0.3})])
def match_anchors_to_gt(anchors, gt_boxes, thresholds):
    """RetinaNet's anchor assignment: IoU matrix built row by row, positives above `pos`,
    negatives below `neg`, ignored in between (-1); every gt gets its best anchor; returned
    as a namedtuple."""
    rows = [_iou(g, anchors) for g in gt_boxes]
    ious = paddle.stack(rows, axis=0)
    best, best_gt = ious.max(axis=0), ious.argmax(axis=0)
    labels = paddle.full([anchors.shape[0]], -1, dtype="int64")
    labels = paddle.where(best < thresholds["neg"], paddle.zeros_like(labels), labels)
    labels = paddle.where(best >= thresholds["pos"], best_gt + 1, labels)
    for g in range(gt_boxes.shape[0]):
        a = ious[g].argmax()
        if ious[g, a] > 0:
            labels[a] = g + 1
    num_pos = (labels > 0).astype("int64").sum()
    if num_pos == 0:
        print("no positive anchors")
    return Match(labels=labels, num_pos=num_pos)


@case(args=[(_BOXES, f32([0.9, 0.8, 0.7, 0.95]), i64([0, 0, 1, 1]), [0, 1]),
            (_BOXES, f32([0.9, 0.1, 0.7, 0.05]), i64([0, 0, 1, 1]), [0, 1, 2])],
      stdout=("class",))
def per_class_score_filter(boxes, scores, labels, classes):
    """Batched post-processing: for each class in a Python list, keep that class's boxes above
    a score threshold; classes with nothing left are skipped with `continue`."""
    results = {}
    for c in classes:
        mask = (labels == c) & (scores > 0.5)
        if not mask.any():
            print(f"class {c}: nothing kept")
            continue
        results[c] = (scores * mask.astype("float32")).sum()
    return results


def _np_dice(logits, target, mask):
    p = 1 / (1 + np.exp(-logits)) * mask
    t = target * mask
    return 1 - (2 * (p * t).sum() + 1) / (p.sum() + t.sum() + 1)


@case(args=[(rand(2, 4), f32([[1, 0, 1, 0], [0, 0, 1, 1]]), f32([[1, 1, 1, 0], [1, 1, 1, 1]])),
            (rand(2, 4), np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32))],
      ref=lambda lo, t, m: np.float32(_np_dice(lo, t, m)) if m.sum() > 0 else np.float32(0),
      batch=lambda b: (rand(b, 4), (rand(b, 4) > 0).astype(np.float32),
                       np.full((b, 4), float(b != 3), np.float32)))
def masked_dice_loss(logits, target, valid):
    """Dice loss over valid pixels; an all-ignored batch returns 0 (a tensor `if`)."""
    if valid.sum() == 0:
        return paddle.zeros([])
    prob = F.sigmoid(logits) * valid
    target = target * valid
    inter = (prob * target).sum()
    return 1 - (2 * inter + 1) / (prob.sum() + target.sum() + 1)


@case(args=[(rand(4, 3) * 3, i64([0, 2, 255, 1]), 2.0, 0.25),
            (rand(3, 3) * 3, i64([255, 255, 255]), 2.0, None)])
def focal_loss_with_ignore(logits, labels, gamma, alpha):
    """Softmax focal loss with ignore_index 255 and an optional alpha; labels equal to 255
    are masked before `take_along_axis`; mean over valid pixels, 0 if none."""
    ignore_index = 255
    valid = labels != ignore_index
    safe = paddle.where(valid, labels, paddle.zeros_like(labels))
    logp = F.log_softmax(logits, axis=-1)
    logp_t = paddle.take_along_axis(logp, safe.unsqueeze(-1), axis=-1).squeeze(-1)
    p_t = logp_t.exp()
    loss = -((1 - p_t) ** gamma) * logp_t
    if alpha is not None:
        loss = alpha * loss
    loss = loss * valid.astype("float32")
    n_valid = valid.astype("float32").sum()
    if n_valid > 0:
        return loss.sum() / n_valid
    return loss.sum() * 0.0


@case(args=[(rand(2, 3, 4) * 3, i64([[0, 1, 2, 255], [2, 2, 1, 0]]), 3),
            (rand(1, 3, 4) * 3, i64([[255, 255, 255, 255]]), 3)])
def miou_per_class_loop(logits, labels, num_classes):
    """Per-pixel argmax, then IoU per class in a Python loop; classes absent from both
    prediction and label are skipped; mIoU over the present ones (nan-free)."""
    pred = logits.argmax(axis=1)
    valid = labels != 255
    ious = []
    for c in range(num_classes):
        p = (pred == c) & valid
        t = (labels == c) & valid
        union = (p | t).astype("float32").sum()
        if union == 0:
            continue
        ious.append((p & t).astype("float32").sum() / union)
    if len(ious) == 0:
        return paddle.zeros([])
    return paddle.stack(ious).mean()


@case(args=[(rand(2, 3, 4) * 2, i64([[0, 1, 2, 1], [1, 1, 0, 255]])),
            (rand(2, 3, 4) * 2, i64([[255, 255, 255, 255], [255, 255, 255, 255]]))],
      batch=lambda b: (rand(b, 3, 4) * 2, np.full((b, 4), 255 if b == 7 else 1, np.int64)))
def ce_with_ignore_index(logits, labels):
    """Segmentation cross-entropy with ignore_index through F.cross_entropy (channels moved
    last), with a guard for an all-ignored batch."""
    if (labels == 255).all():
        return (logits * 0).sum()
    x = logits.transpose([0, 2, 1])
    return F.cross_entropy(x, labels, ignore_index=255)


class YoloHead(nn.Layer):
    """A YOLO-style head: per-level outputs in a Python list; boxes with objectness above a
    threshold per image kept, counted, and the best one returned (or zeros if none)."""

    def __init__(self):
        super().__init__()
        self.pred = nn.Linear(3, 5)

    def forward(self, feats, conf_thr=0.5):
        outs = [self.pred(f) for f in feats]
        preds = paddle.concat(outs, axis=1)
        obj = F.sigmoid(preds[..., 4])
        best_boxes = []
        counts = []
        for b in range(preds.shape[0]):
            keep = obj[b] > conf_thr
            counts.append(keep.astype("int64").sum())
            if keep.any():
                best_boxes.append(preds[b, obj[b].argmax(), :4])
            else:
                best_boxes.append(paddle.zeros([4]))
        return paddle.stack(best_boxes), paddle.stack(counts)


case(args=[([rand(2, 3, 3) * 4, rand(2, 2, 3) * 4], 0.5),
           ([rand(2, 3, 3) * 0.01, rand(2, 2, 3) * 0.01], 0.99)], rtol=1e-4,
     atol=1e-5)(YoloHead)
