"""OpInfos for rt.vision.ops.yolo_box and yolo_loss, against references that loop over every
grid cell, anchor and box the way Paddle's kernels are described (independent of the
vectorised runtime code)."""
from __future__ import annotations

import math

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample

import runtime as rt

ANCHORS = [10, 13, 16, 30, 33, 23]


def _sig(v):
    return 1.0 / (1.0 + math.exp(-v))


def _sce(v, t):
    return max(v, 0.0) - v * t + math.log1p(math.exp(-abs(v)))


def _iou(a, b):  # (cx, cy, w, h)
    ix = max(min(a[0] + a[2] / 2, b[0] + b[2] / 2) - max(a[0] - a[2] / 2, b[0] - b[2] / 2), 0)
    iy = max(min(a[1] + a[3] / 2, b[1] + b[3] / 2) - max(a[1] - a[3] / 2, b[1] - b[3] / 2), 0)
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter + 1e-12)


def _yolo_box_ref(x, img_size, anchors, class_num, conf_thresh, downsample_ratio,
                  clip_bbox=True, scale_x_y=1.0):
    n, _, h, w = x.shape
    an = np.asarray(anchors, float).reshape(-1, 2)
    a = len(an)
    p = x.reshape(n, a, 5 + class_num, h, w)
    boxes = np.zeros((n, a * h * w, 4), x.dtype)
    scores = np.zeros((n, a * h * w, class_num), x.dtype)
    bias = -0.5 * (scale_x_y - 1)
    for i in range(n):
        img_h, img_w = img_size[i]
        for k in range(a):
            for gj in range(h):
                for gi in range(w):
                    conf = _sig(p[i, k, 4, gj, gi])
                    if conf < conf_thresh:
                        continue
                    r = (k * h + gj) * w + gi
                    cx = (gi + _sig(p[i, k, 0, gj, gi]) * scale_x_y + bias) * img_w / w
                    cy = (gj + _sig(p[i, k, 1, gj, gi]) * scale_x_y + bias) * img_h / h
                    bw = math.exp(p[i, k, 2, gj, gi]) * an[k, 0] * img_w / (downsample_ratio * w)
                    bh = math.exp(p[i, k, 3, gj, gi]) * an[k, 1] * img_h / (downsample_ratio * h)
                    box = [cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2]
                    if clip_bbox:
                        box = [max(box[0], 0), max(box[1], 0), min(box[2], img_w - 1),
                               min(box[3], img_h - 1)]
                    boxes[i, r] = box
                    scores[i, r] = [conf * _sig(p[i, k, 5 + c, gj, gi]) for c in range(class_num)]
    return boxes, scores


def _yolo_box_samples(rng):
    return [Sample((rng.standard_normal((2, 3 * 7, 3, 4)), np.array([[64, 80], [40, 32]]),
                    ANCHORS, 2, 0.4, 16), grad=False),
            Sample((rng.standard_normal((1, 2 * 8, 2, 2)), np.array([[32, 32]]), ANCHORS[:4],
                    3, 0.0, 16), {"clip_bbox": False, "scale_x_y": 1.2})]


def _yolo_loss_ref(x, gt_box, gt_label, anchors, anchor_mask, class_num, ignore_thresh,
                   downsample_ratio, gt_score=None, use_label_smooth=True, scale_x_y=1.0):
    n, _, h, w = x.shape
    m = len(anchor_mask)
    an = np.asarray(anchors, float).reshape(-1, 2)
    p = x.reshape(n, m, 5 + class_num, h, w).astype(float)
    size = downsample_ratio * h
    score = np.ones(gt_label.shape) if gt_score is None else gt_score
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    bias = -0.5 * (scale_x_y - 1)
    loss = np.zeros(n)
    for i in range(n):
        valid = [b for b in range(gt_box.shape[1]) if gt_box[i, b, 2] > 0 and gt_box[i, b, 3] > 0]
        objmask = np.zeros((m, h, w))
        for k in range(m):
            for gj in range(h):
                for gi in range(w):
                    pred = ((gi + _sig(p[i, k, 0, gj, gi]) * scale_x_y + bias) / w,
                            (gj + _sig(p[i, k, 1, gj, gi]) * scale_x_y + bias) / h,
                            math.exp(p[i, k, 2, gj, gi]) * an[anchor_mask[k], 0] / size,
                            math.exp(p[i, k, 3, gj, gi]) * an[anchor_mask[k], 1] / size)
                    if valid and max(_iou(pred, gt_box[i, b]) for b in valid) > ignore_thresh:
                        objmask[k, gj, gi] = -1
        for b in valid:
            bx, by, bw, bh = gt_box[i, b]
            best = int(np.argmax([_iou((0, 0, aw / size, ah / size), (0, 0, bw, bh))
                                  for aw, ah in an]))
            if best not in anchor_mask:
                continue
            k = anchor_mask.index(best)
            gi, gj = int(bx * w), int(by * h)
            s = (2 - bw * bh) * score[i, b]
            q = p[i, k, :, gj, gi]
            loss[i] += s * (_sce(q[0], bx * w - gi) + _sce(q[1], by * h - gj)
                            + abs(q[2] - math.log(bw * size / an[best, 0]))
                            + abs(q[3] - math.log(bh * size / an[best, 1])))
            objmask[k, gj, gi] = score[i, b]
            for c in range(class_num):
                t = 1 - smooth if c == gt_label[i, b] else smooth
                loss[i] += _sce(q[5 + c], t) * score[i, b]
        for k in range(m):
            for gj in range(h):
                for gi in range(w):
                    o = objmask[k, gj, gi]
                    if o > 1e-5:
                        loss[i] += _sce(p[i, k, 4, gj, gi], 1.0) * o
                    elif o > -0.5:
                        loss[i] += _sce(p[i, k, 4, gj, gi], 0.0)
    return loss.astype(x.dtype)


def _yolo_loss_samples(rng):
    def boxes(n, b):
        out = np.concatenate([rng.uniform(0.1, 0.9, (n, b, 2)), rng.uniform(0.1, 0.8, (n, b, 2))],
                             -1)
        out[0, -1] = 0  # a padding row
        return out
    return [Sample((rng.standard_normal((2, 2 * 8, 3, 3)), boxes(2, 3),
                    rng.integers(0, 3, (2, 3)), ANCHORS, [1, 2], 3, 0.5, 8)),
            Sample((rng.standard_normal((1, 3 * 7, 3, 3)) * 0.5, boxes(1, 4),
                    rng.integers(0, 2, (1, 4)), ANCHORS, [0, 1, 2], 2, 0.3, 16),
                   {"gt_score": rng.uniform(0.5, 1.0, (1, 4)), "use_label_smooth": False,
                    "scale_x_y": 1.1})]


OPINFOS = [
    OpInfo("yolo_box", rt.vision.ops.yolo_box, _yolo_box_ref, _yolo_box_samples, grad=(0,),
           rtol={"float32": 1e-4, "float64": 1e-9}, atol={"float32": 1e-4, "float64": 1e-9}),
    OpInfo("yolo_loss", rt.vision.ops.yolo_loss, _yolo_loss_ref, _yolo_loss_samples,
           grad=(0,), covers=("yolo_targets",),
           rtol={"float32": 1e-4, "float64": 1e-9}, atol={"float32": 1e-4, "float64": 1e-9},
           error_samples=[ErrorSample((np.ones((1, 10, 2, 2)), np.ones((1, 1, 4)),
                                       np.zeros((1, 1), "int64"), ANCHORS, [0, 1], 3, 0.5, 8),
                                      {}, ValueError,
                                      r"yolo_loss: x must be \[N, 2 \* \(5 \+ 3\), H, W\]")]),
]
