"""YOLOv3: a small Darknet-style backbone, two detection heads (the second upsampled and
concatenated with a shallower feature map, `F.interpolate` with `scale_factor`), trained with
`rt.vision.ops.yolo_loss` per head, and an inference model that decodes with
`rt.vision.ops.yolo_box`. See harness.py for what is checked."""
import numpy as np

import runtime as rt
import runtime.nn as nn
import runtime.nn.functional as F
from runtime.vision.ops import yolo_box, yolo_loss

from .harness import check_family

CLASSES, IMG = 3, 32
ANCHORS = [4, 5, 8, 10, 12, 9, 16, 20, 24, 18, 30, 28]
MASKS = [[3, 4, 5], [0, 1, 2]]  # coarse head: large anchors; fine head: small ones
RATIOS = [16, 8]


class ConvBNLeaky(nn.Layer):
    def __init__(self, cin, cout, k, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=(k - 1) // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)

    def forward(self, x):
        return F.leaky_relu(self.bn(self.conv(x)), 0.1)


class YOLOv3(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(ConvBNLeaky(3, 8, 3, 2), ConvBNLeaky(8, 8, 3, 2),
                                    ConvBNLeaky(8, 12, 3, 2))  # stride 8
        self.stage2 = ConvBNLeaky(12, 16, 3, 2)  # stride 16
        out = len(MASKS[0]) * (5 + CLASSES)
        self.head0 = nn.Conv2D(16, out, 1)
        self.route = ConvBNLeaky(16, 8, 1)
        self.head1 = nn.Conv2D(8 + 12, out, 1)

    def forward(self, img):
        c3 = self.stage1(img)
        c4 = self.stage2(c3)
        up = F.interpolate(self.route(c4), scale_factor=2)
        return self.head0(c4), self.head1(rt.concat([up, c3], axis=1))


class YOLOv3Infer(YOLOv3):
    """Training calls it with the image only (the raw heads); inference also passes the image
    sizes and gets decoded boxes and scores."""

    def forward(self, img, img_size=None):
        heads = super().forward(img)
        if img_size is None:
            return heads
        boxes, scores = [], []
        for out, mask, ratio in zip(heads, MASKS, RATIOS):
            anchors = [ANCHORS[2 * i + j] for i in mask for j in (0, 1)]
            b, s = yolo_box(out, img_size, anchors, CLASSES, 0.01, ratio)
            boxes.append(b)
            scores.append(s)
        return rt.concat(boxes, axis=1), rt.concat(scores, axis=1)


def yolo_batch(rng, n, boxes=3):
    gt = np.concatenate([rng.uniform(0.2, 0.8, (n, boxes, 2)),
                         rng.uniform(0.1, 0.6, (n, boxes, 2))], -1).astype("float32")
    gt[:, -1] = 0.0  # padding rows
    return (rng.standard_normal((n, 3, IMG, IMG)).astype("float32"),
            np.full((n, 2), IMG, "int32"), gt,
            rng.integers(0, CLASSES, (n, boxes)).astype("int32"))


def yolo_train_loss(model, img, img_size, gt_box, gt_label):
    total = 0.0
    for out, mask, ratio in zip(model(img), MASKS, RATIOS):
        loss = yolo_loss(out, gt_box, gt_label, ANCHORS, mask, CLASSES, ignore_thresh=0.7,
                         downsample_ratio=ratio)
        total = total + rt.mean(loss)
    return total


def test_yolov3_head_and_loss(tmp_path):
    losses = check_family(tmp_path, YOLOv3Infer, yolo_batch, yolo_train_loss, 2, lr=0.002,
                          rtol=1e-4, atol=1e-4)
    assert all(loss > 0 for loss in losses)
