"""YOLOv3 heads: `yolo_box` decodes predictions into boxes and scores, `yolo_loss` is the
training loss, both with Paddle's signatures and rules. The loss is differentiable in `x`;
target assignment and the ignore mask come from the no-gradient `yolo_targets` op."""
from __future__ import annotations

import numpy as np

from ..ops import combine as _combine
from ..ops import creation as _creation
from ..ops import gather as _gather
from ..ops import logic as _logic
from ..ops import math as _math
from ..ops import nn as _nn
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.yolo import yolo_targets
from ..tensor import to_tensor


def _split_head(x, num_anchors: int, class_num: int, fn: str):
    """x [N, A * (5 + C), H, W] -> [N, A, 5 + C, H, W] (H and W must be known)."""
    if len(x.shape) != 4 or x.shape[1] not in (-1, num_anchors * (5 + class_num)):
        raise ValueError(f"{fn}: x must be [N, {num_anchors} * (5 + {class_num}), H, W] for "
                         f"{num_anchors} anchors and {class_num} classes, got {list(x.shape)}")
    h, w = x.shape[2], x.shape[3]
    if -1 in (h, w):
        raise ValueError("yolo: the grid size (H, W of x) must be known when the program is "
                         "built")
    return _shape.reshape(x, [-1, num_anchors, 5 + class_num, h, w]), h, w


def yolo_box(x, img_size, anchors, class_num: int, conf_thresh: float, downsample_ratio: int,
             clip_bbox: bool = True, name=None, scale_x_y: float = 1.0,
             iou_aware: bool = False, iou_aware_factor: float = 0.5):
    """Boxes [N, A*H*W, 4] (x1, y1, x2, y2 in image pixels) and scores [N, A*H*W, class_num]
    (objectness x class probability) from a YOLOv3 head `x` [N, A*(5+C), H, W]; `img_size`
    [N, 2] holds each image's (height, width). Predictions with objectness below
    `conf_thresh` get zero boxes and scores (Paddle's yolo_box).

    >>> import runtime as rt
    >>> boxes, scores = rt.vision.ops.yolo_box(rt.zeros([1, 14, 2, 2]), rt.to_tensor([[64, 64]]),
    ...                                        [10, 13, 16, 30], 2, 0.01, 32)
    >>> boxes.shape, scores.shape
    ([1, 8, 4], [1, 8, 2])
    """
    if iou_aware:
        raise NotImplementedError("yolo_box: iou_aware=True is not provided")
    anchors = np.asarray(anchors, "float64").reshape(-1, 2)
    a = len(anchors)
    p, h, w = _split_head(x, a, class_num, "yolo_box")
    dtype = x.dtype.np
    img = _math.cast(img_size, x.dtype)
    img_h = _shape.reshape(img[:, 0], [-1, 1, 1, 1])
    img_w = _shape.reshape(img[:, 1], [-1, 1, 1, 1])
    bias = -0.5 * (scale_x_y - 1.0)
    grid_x = to_tensor(np.arange(w, dtype=dtype).reshape(1, 1, 1, w))
    grid_y = to_tensor(np.arange(h, dtype=dtype).reshape(1, 1, h, 1))
    cx = (grid_x + _nn.sigmoid(p[:, :, 0]) * scale_x_y + bias) * img_w / float(w)
    cy = (grid_y + _nn.sigmoid(p[:, :, 1]) * scale_x_y + bias) * img_h / float(h)
    aw = to_tensor(anchors[:, 0].astype(dtype).reshape(1, a, 1, 1))
    ah = to_tensor(anchors[:, 1].astype(dtype).reshape(1, a, 1, 1))
    bw = _math.exp(p[:, :, 2]) * aw * img_w / float(downsample_ratio * w)
    bh = _math.exp(p[:, :, 3]) * ah * img_h / float(downsample_ratio * h)
    x1, y1, x2, y2 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
    if clip_bbox:
        zero = _creation.zeros_like(x1)
        x1, y1 = _math.maximum(x1, zero), _math.maximum(y1, zero)
        x2 = _math.minimum(x2, img_w - 1.0 + zero)
        y2 = _math.minimum(y2, img_h - 1.0 + zero)
    conf = _nn.sigmoid(p[:, :, 4])
    keep = _math.cast(_logic.greater_equal(conf, _creation.full_like(conf, conf_thresh)),
                      x.dtype)
    boxes = _combine.stack([x1, y1, x2, y2], axis=-1) * _shape.unsqueeze(keep, -1)
    scores = _nn.sigmoid(p[:, :, 5:]) * _shape.unsqueeze(conf * keep, 2)  # [N, A, C, H, W]
    boxes = _shape.reshape(boxes, [-1, a * h * w, 4])
    scores = _shape.reshape(_shape.transpose(scores, [0, 1, 3, 4, 2]), [-1, a * h * w,
                                                                          class_num])
    return boxes, scores


def _sce(logit, target):
    """Sigmoid cross entropy with logits, elementwise (stable form)."""
    return _nn.relu(logit) - logit * target + _math.log1p(_math.exp(-_math.abs(logit)))


def yolo_loss(x, gt_box, gt_label, anchors, anchor_mask, class_num: int,
              ignore_thresh: float, downsample_ratio: int, gt_score=None,
              use_label_smooth: bool = True, name=None, scale_x_y: float = 1.0):
    """The YOLOv3 loss of each image, shape [N] (Paddle's `yolo_loss`): for each ground-truth
    box (`gt_box` [N, B, 4] as normalised cx, cy, w, h; all-zero rows are padding) the best
    of all `anchors` by shape IoU, if it is in `anchor_mask`, owns the cell holding the box
    centre: sigmoid cross entropy on x/y offsets and classes and L1 on log w/h, weighted by
    (2 - w*h) and `gt_score`; objectness is trained towards 1 there and towards 0 where no
    prediction overlaps a box by more than `ignore_thresh`.

    >>> import runtime as rt
    >>> loss = rt.vision.ops.yolo_loss(
    ...     rt.zeros([1, 14, 2, 2]), rt.to_tensor([[[0.3, 0.6, 0.2, 0.4]]]), rt.to_tensor([[1]]),
    ...     [10, 13, 16, 30], [0, 1], 2, 0.7, 32)
    >>> loss.shape
    [1]
    """
    m = len(anchor_mask)
    p, h, w = _split_head(x, m, class_num, "yolo_loss")
    if gt_score is None:
        gt_score = _creation.ones_like(gt_label, dtype=x.dtype)
    idx, weight, tx, ty, tw, th, tscale, obj_w, obj_t = yolo_targets(
        x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num, ignore_thresh,
        downsample_ratio, scale_x_y)

    def at_boxes(channel):  # the prediction of `channel` in each box's cell: [N, B]
        return _gather.take_along_axis(_shape.reshape(p[:, :, channel], [-1, m * h * w]), idx,
                                       axis=1)

    pos = weight * tscale
    loc = pos * (_sce(at_boxes(0), tx) + _sce(at_boxes(1), ty)
                 + _math.abs(at_boxes(2) - tw) + _math.abs(at_boxes(3) - th))
    cls_pred = _shape.reshape(_shape.transpose(p[:, :, 5:], [0, 1, 3, 4, 2]),
                              [-1, m * h * w, class_num])
    cls_idx = _shape.expand(_shape.unsqueeze(idx, -1), [-1, -1, class_num])
    cls_at = _gather.take_along_axis(cls_pred, cls_idx, axis=1)  # [N, B, C]
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    onehot = _math.cast(_gather.one_hot(gt_label, class_num), x.dtype)
    target = onehot * (1.0 - 2 * smooth) + smooth
    cls = _reduce.sum(_sce(cls_at, target), axis=-1) * weight
    obj = obj_w * _sce(_shape.reshape(p[:, :, 4], [-1, m * h * w]), obj_t)
    return _reduce.sum(loc + cls, axis=1) + _reduce.sum(obj, axis=1)


__all__ = ["yolo_box", "yolo_loss"]
