"""Detection post-processing as detection repos write it: box decoding and encoding, IoU,
anchor matching, NMS with a tensor `while`, score filtering with top-k, focal and GIoU losses."""
import numpy as np

import runtime as paddle
import runtime.nn.functional as F

from .registry import case, f32, i64, pos, rand

_BOXES = f32([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [21, 19, 31, 29],
              [0, 0, 9, 9], [50, 50, 60, 70]])
_SCORES = f32([0.9, 0.8, 0.75, 0.3, 0.6, 0.05])


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = paddle.maximum(boxes1[:, None, :2], boxes2[:, :2])
    rb = paddle.minimum(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clip(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


def _np_iou(a, b):
    lt = np.maximum(a[:, None, :2], b[:, :2])
    rb = np.minimum(a[:, None, 2:], b[:, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    return inter / (area(a)[:, None] + area(b) - inter)


def _np_nms(boxes, scores, thr):
    order = np.argsort(-scores, kind="stable")
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(i)
        ious = _np_iou(boxes[i:i + 1], boxes[order[1:]])[0]
        order = order[1:][ious <= thr]
    return np.asarray(keep, dtype=np.int64)


class BoxCoder:
    """The delta coder of Faster R-CNN style heads, configured once."""

    def __init__(self, weights=(10.0, 10.0, 5.0, 5.0), bbox_xform_clip=4.135):
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def decode(self, deltas, anchors, image_size=None):
        widths = anchors[:, 2] - anchors[:, 0]
        heights = anchors[:, 3] - anchors[:, 1]
        ctr_x = anchors[:, 0] + 0.5 * widths
        ctr_y = anchors[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = deltas[:, 0] / wx
        dy = deltas[:, 1] / wy
        dw = paddle.clip(deltas[:, 2] / ww, max=self.bbox_xform_clip)
        dh = paddle.clip(deltas[:, 3] / wh, max=self.bbox_xform_clip)
        pred_ctr_x = dx * widths + ctr_x
        pred_ctr_y = dy * heights + ctr_y
        pred_w = paddle.exp(dw) * widths
        pred_h = paddle.exp(dh) * heights
        boxes = paddle.stack([pred_ctr_x - 0.5 * pred_w, pred_ctr_y - 0.5 * pred_h,
                              pred_ctr_x + 0.5 * pred_w, pred_ctr_y + 0.5 * pred_h], axis=1)
        if image_size is not None:
            h, w = image_size
            boxes = paddle.stack([boxes[:, 0].clip(0, w), boxes[:, 1].clip(0, h),
                                  boxes[:, 2].clip(0, w), boxes[:, 3].clip(0, h)], axis=1)
        return boxes

    def encode(self, gt, anchors):
        assert gt.shape == anchors.shape, "gt and anchors must be paired"
        wx, wy, ww, wh = self.weights
        aw = anchors[:, 2] - anchors[:, 0]
        ah = anchors[:, 3] - anchors[:, 1]
        gw = gt[:, 2] - gt[:, 0]
        gh = gt[:, 3] - gt[:, 1]
        dx = wx * ((gt[:, 0] + 0.5 * gw) - (anchors[:, 0] + 0.5 * aw)) / aw
        dy = wy * ((gt[:, 1] + 0.5 * gh) - (anchors[:, 1] + 0.5 * ah)) / ah
        return paddle.stack([dx, dy, ww * paddle.log(gw / aw), wh * paddle.log(gh / ah)], axis=1)


_CODER = BoxCoder()


@case(args=[(rand(6, 4), _BOXES, None), (rand(6, 4) * 50, _BOXES, (32, 40))])
def decode_boxes(deltas, anchors, image_size):
    return _CODER.decode(deltas, anchors, image_size)


@case(args=[(_BOXES + 1, _BOXES, None), (_BOXES[:3] * 2 + 1, _BOXES[:3], (100, 100))],
      ref=lambda gt, anchors, image_size: gt, rtol=1e-4, atol=1e-4)
def encode_then_decode(gt, anchors, image_size):
    deltas = _CODER.encode(gt, anchors)
    return _CODER.decode(deltas, anchors, image_size)


@case(args=[(_BOXES, _BOXES[:2]), (_BOXES, f32([[100, 100, 110, 110]]))],
      batch=lambda b: (np.tile(_BOXES, (b, 1))[:b + 1], _BOXES[:2] + b))
def match_anchors(anchors, gt_boxes, fg_thresh=0.5, bg_thresh=0.4):
    """Label anchors 1 (foreground), 0 (background) or -1 (ignored) by their best IoU."""
    iou = box_iou(anchors, gt_boxes)
    max_iou = iou.max(axis=1)
    matched = iou.argmax(axis=1)
    labels = paddle.full([anchors.shape[0]], -1, dtype="int64")
    labels = paddle.where(max_iou < bg_thresh, paddle.zeros_like(labels), labels)
    labels = paddle.where(max_iou >= fg_thresh, paddle.ones_like(labels), labels)
    if max_iou.max() < fg_thresh:
        # no anchor matches well: take the best anchor of each gt as foreground
        best = iou.argmax(axis=0)
        labels = paddle.scatter(labels, best, paddle.ones([gt_boxes.shape[0]], dtype="int64"))
    return {"labels": labels, "matched_gt": matched, "max_iou": max_iou}


@case(args=[(_BOXES, _SCORES, 0.5), (_BOXES, _SCORES, 0.0), (_BOXES[:1], _SCORES[:1], 0.5)],
      ref=lambda b, s, t: _np_nms(b, s, t))
def nms(boxes, scores, iou_threshold):
    order = paddle.argsort(scores, descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        ious = box_iou(boxes[i].unsqueeze(0), paddle.gather(boxes, order[1:]))[0]
        order = order[1:][ious <= iou_threshold]
    return paddle.stack(keep)


@case(args=[(_BOXES, _SCORES, i64([0, 0, 1, 1, 0, 1])), (_BOXES, _SCORES, i64([0, 1, 0, 1, 2, 2]))],
      batch=lambda b: (np.tile(_BOXES, (2, 1))[:b], np.tile(_SCORES, 2)[:b], i64(np.arange(b) % 2)))
def batched_nms(boxes, scores, idxs, iou_threshold=0.5):
    """torchvision's trick: offset boxes by class so boxes of different classes never overlap."""
    if boxes.numel() == 0:
        return paddle.zeros([0], dtype="int64")
    max_coordinate = boxes.max()
    offsets = idxs.astype(boxes.dtype) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


@case(args=[(_BOXES, _SCORES, 0.5, 3), (_BOXES, _SCORES, 0.1, 10), (_BOXES, _SCORES * 0.1, 0.5, 3)])
def filter_detections(boxes, scores, score_thresh, pre_nms_top_n):
    num = min(pre_nms_top_n, scores.shape[0])
    top_scores, top_idx = paddle.topk(scores, k=num)
    top_boxes = paddle.gather(boxes, top_idx)
    keep = top_scores > score_thresh
    if not keep.any():
        return {"boxes": paddle.zeros([0, 4]), "scores": paddle.zeros([0]), "num": 0}
    kept_scores = paddle.masked_select(top_scores, keep)
    kept_boxes = paddle.masked_select(top_boxes, keep.unsqueeze(1).expand([num, 4]))
    kept_boxes = kept_boxes.reshape([-1, 4])
    return {"boxes": kept_boxes, "scores": kept_scores, "num": kept_scores.shape[0]}


@case(args=[(8, 8, [16.0], [1.0]), (4, 6, [8.0, 16.0], [0.5, 1.0, 2.0])])
def generate_anchors(feat_h, feat_w, sizes, aspect_ratios, stride=4):
    cell = []
    for size in sizes:
        area = size * size
        for ratio in aspect_ratios:
            w = (area / ratio) ** 0.5
            h = ratio * w
            cell.append([-w / 2.0, -h / 2.0, w / 2.0, h / 2.0])
    cell_anchors = paddle.to_tensor(cell, dtype="float32")
    shifts_x = paddle.arange(0, feat_w * stride, step=stride, dtype="float32")
    shifts_y = paddle.arange(0, feat_h * stride, step=stride, dtype="float32")
    shift_y, shift_x = paddle.meshgrid(shifts_y, shifts_x)
    shift_x = shift_x.reshape([-1])
    shift_y = shift_y.reshape([-1])
    shifts = paddle.stack([shift_x, shift_y, shift_x, shift_y], axis=1)
    anchors = (shifts.reshape([-1, 1, 4]) + cell_anchors.reshape([1, -1, 4])).reshape([-1, 4])
    return anchors


def _np_focal(logits, targets, alpha, gamma):
    p = 1 / (1 + np.exp(-logits))
    ce = np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - p_t) ** gamma
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    return loss


@case(args=[(rand(4, 3) * 3, f32(np.eye(4, 3)), 0.25, 2, "mean"),
            (rand(4, 3) * 3, f32(np.zeros((4, 3))), -1, 0, "sum"),
            (rand(4, 3) * 3, f32(np.eye(4, 3)), 0.25, 2, "none")],
      ref=lambda x, t, a, g, r: {"mean": np.mean, "sum": np.sum}.get(r, lambda v: v)(
          _np_focal(x, t, a, g)).astype(np.float32),
      rtol=1e-4)
def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    p = F.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "mean":
        loss = loss.mean()
    elif reduction == "sum":
        loss = loss.sum()
    return loss


@case(args=[(_BOXES[:3], _BOXES[:3] + 1), (_BOXES[:3], _BOXES[3:6]), (_BOXES[:0], _BOXES[:0])])
def giou_loss(pred, target, eps=1e-7):
    if pred.shape[0] == 0:
        return pred.sum() * 0.0
    x1 = paddle.maximum(pred[:, 0], target[:, 0])
    y1 = paddle.maximum(pred[:, 1], target[:, 1])
    x2 = paddle.minimum(pred[:, 2], target[:, 2])
    y2 = paddle.minimum(pred[:, 3], target[:, 3])
    inter = (x2 - x1).clip(min=0) * (y2 - y1).clip(min=0)
    union = box_area(pred) + box_area(target) - inter + eps
    iou = inter / union
    cx1 = paddle.minimum(pred[:, 0], target[:, 0])
    cy1 = paddle.minimum(pred[:, 1], target[:, 1])
    cx2 = paddle.maximum(pred[:, 2], target[:, 2])
    cy2 = paddle.maximum(pred[:, 3], target[:, 3])
    enclosing = (cx2 - cx1) * (cy2 - cy1) + eps
    giou = iou - (enclosing - union) / enclosing
    loss = 1 - giou
    if (iou > 0.5).all():
        print("giou: all pairs overlap")
    return loss.mean()


@case(args=[(pos(2, 5, 4) * 10, pos(2, 5) * 0.5, 0.3),
            (pos(2, 5, 4) * 10, pos(2, 5) * 0.1, 0.3)])
def per_image_postprocess(batch_boxes, batch_scores, score_thresh):
    """A loop over the images of a batch; an image with no score over the threshold gets a
    placeholder detection, as detection heads do to keep the output list dense."""
    results = []
    for boxes, scores in zip(batch_boxes, batch_scores):
        mask = scores > score_thresh
        if mask.sum() == 0:
            results.append({"boxes": paddle.zeros([1, 4]), "count": paddle.zeros([], "int64")})
            continue
        best = scores.argmax()
        results.append({"boxes": boxes[best].unsqueeze(0), "count": mask.astype("int64").sum()})
    return results
