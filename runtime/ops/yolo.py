"""The data-dependent half of YOLOv3's loss as a no-gradient op: which anchor and grid cell
each ground-truth box is assigned to, its regression targets, and which predictions are
ignored in the objectness loss because they already overlap a box (Paddle's yolov3_loss
rules). `runtime.vision.ops.yolo_loss` builds the differentiable loss from these targets."""
from __future__ import annotations

import numpy as np

from .. import backend
from ..dtypes import int64
from . import infer as I
from .registry import Meta, OpError, OpTypeError, bind, register


def _iou_cxcywh(a, b):
    """IoU of boxes (cx, cy, w, h) broadcast against each other."""
    ax0, ay0, ax1, ay1 = a[..., 0] - a[..., 2] / 2, a[..., 1] - a[..., 3] / 2, \
        a[..., 0] + a[..., 2] / 2, a[..., 1] + a[..., 3] / 2
    bx0, by0, bx1, by1 = b[..., 0] - b[..., 2] / 2, b[..., 1] - b[..., 3] / 2, \
        b[..., 0] + b[..., 2] / 2, b[..., 1] + b[..., 3] / 2
    iw = np.clip(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), 0, None)
    ih = np.clip(np.minimum(ay1, by1) - np.maximum(ay0, by0), 0, None)
    inter = iw * ih
    return inter / (a[..., 2] * a[..., 3] + b[..., 2] * b[..., 3] - inter + 1e-12)


def _targets_kernel(xp, x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num,
                    ignore_thresh, downsample_ratio, scale_x_y=1.0):
    dt = np.dtype(x.dtype)  # targets come in the dtype of the predictions
    x, gt_box = backend.to_numpy(x).astype(np.float64), backend.to_numpy(gt_box).astype(
        np.float64)
    gt_label, gt_score = backend.to_numpy(gt_label), backend.to_numpy(gt_score).astype(
        np.float64)
    n, _, h, w = x.shape
    m, boxes = len(anchor_mask), gt_box.shape[1]
    input_h, input_w = downsample_ratio * h, downsample_ratio * w
    anchors = np.asarray(anchors, np.float64).reshape(-1, 2)
    pred = x.reshape(n, m, 5 + class_num, h, w)
    sig = 1 / (1 + np.exp(-pred[:, :, :2]))
    bias = -0.5 * (scale_x_y - 1.0)
    cx = (np.arange(w)[None, None, None, :] + sig[:, :, 0] * scale_x_y + bias) / w
    cy = (np.arange(h)[None, None, :, None] + sig[:, :, 1] * scale_x_y + bias) / h
    used = anchors[list(anchor_mask)]
    pw = np.exp(pred[:, :, 2]) * used[None, :, 0, None, None] / input_w
    ph = np.exp(pred[:, :, 3]) * used[None, :, 1, None, None] / input_h
    boxes_pred = np.stack([cx, cy, pw, ph], -1)  # [N, M, H, W, 4]
    valid_gt = (gt_box[..., 2] > 0) & (gt_box[..., 3] > 0)
    obj_w = np.ones((n, m, h, w))
    obj_t = np.zeros((n, m, h, w))
    for i in range(n):
        if valid_gt[i].any():
            iou = _iou_cxcywh(boxes_pred[i][..., None, :], gt_box[i][valid_gt[i]])
            obj_w[i][iou.max(-1) > ignore_thresh] = 0.0  # ignored in the objectness loss
    idx = np.zeros((n, boxes), np.int64)
    weight = np.zeros((n, boxes))
    tx, ty, tw, th, tscale = (np.zeros((n, boxes)) for _ in range(5))
    shapes = np.concatenate([np.zeros_like(anchors), anchors / [input_w, input_h]], 1)
    for i in range(n):
        for b in range(boxes):
            if not valid_gt[i, b]:
                continue
            bx, by, bw, bh = gt_box[i, b]
            best = int(np.argmax(_iou_cxcywh(shapes, np.array([0, 0, bw, bh]))))
            if best not in anchor_mask:
                continue
            k = list(anchor_mask).index(best)
            gi, gj = int(bx * w), int(by * h)
            idx[i, b] = (k * h + gj) * w + gi
            weight[i, b] = gt_score[i, b]
            tx[i, b], ty[i, b] = bx * w - gi, by * h - gj
            tw[i, b] = np.log(bw * input_w / anchors[best, 0])
            th[i, b] = np.log(bh * input_h / anchors[best, 1])
            tscale[i, b] = 2.0 - bw * bh
            positive = gt_score[i, b] > 1e-5  # as Paddle: a zero score counts as negative
            obj_w[i, k, gj, gi] = gt_score[i, b] if positive else 1.0
            obj_t[i, k, gj, gi] = 1.0 if positive else 0.0
    flat = (n, m * h * w)
    return (xp.asarray(idx), *(xp.asarray(a.astype(dt)) for a in (
        weight, tx, ty, tw, th, tscale, obj_w.reshape(flat), obj_t.reshape(flat))))


def _targets_infer(x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num,
                   ignore_thresh, downsample_ratio, scale_x_y=1.0):
    for arg, meta in (("x", x), ("gt_box", gt_box), ("gt_label", gt_label)):
        I.check_tensor("yolo_loss", arg, meta)
    for arg, meta in (("x", x), ("gt_box", gt_box)):
        if not meta.dtype.is_floating:
            raise OpTypeError(f"yolo_loss: {arg} has dtype {meta.dtype.name}; it must be a "
                              "floating-point tensor")
    m = len(anchor_mask)
    if len(x.shape) != 4 or x.shape[1] not in (-1, m * (5 + class_num)):
        raise OpError(f"yolo_loss: x must be [N, {m} * (5 + {class_num}), H, W] for "
                      f"{m} anchors and {class_num} classes, got {I.fmt(x.shape)}")
    if len(gt_box.shape) != 3 or gt_box.shape[2] not in (-1, 4):
        raise OpError(f"yolo_loss: gt_box must be [N, B, 4], got {I.fmt(gt_box.shape)}")
    n, b = gt_box.shape[:2]
    cells = -1 if -1 in x.shape[2:] else m * x.shape[2] * x.shape[3]
    per_box = Meta((n, b), x.dtype)
    per_cell = Meta((n, cells), x.dtype)
    return (Meta((n, b), int64), per_box, per_box, per_box, per_box, per_box, per_box,
            per_cell, per_cell)


YOLO_TARGETS = register("yolo_targets", kernel=_targets_kernel, infer=_targets_infer,
                        amp="keep", nondiff=True,
                        doc="YOLOv3 target assignment and ignore mask (Paddle's rules).")


def yolo_targets(x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num,
                 ignore_thresh, downsample_ratio, scale_x_y=1.0):
    """(cell index, weight, tx, ty, tw, th, scale) per box and (objectness weight, target)
    per prediction; see `runtime.vision.ops.yolo_loss`."""
    attrs = {"anchors": [int(a) for a in anchors], "anchor_mask": [int(a) for a in anchor_mask],
             "class_num": int(class_num), "ignore_thresh": float(ignore_thresh),
             "downsample_ratio": int(downsample_ratio)}
    if scale_x_y != 1.0:
        attrs["scale_x_y"] = float(scale_x_y)
    return bind(YOLO_TARGETS, (x, gt_box, gt_label, gt_score), attrs)


METHODS: dict = {}
