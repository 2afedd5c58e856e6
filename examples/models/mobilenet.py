"""A small MobileNet (v1): depthwise separable convolutions, the depthwise part a grouped
convolution with one group per channel.

>>> import runtime as rt
>>> from examples.models import MobileNet
>>> MobileNet()(rt.zeros([2, 3, 16, 16])).shape
[2, 10]
"""
from __future__ import annotations

import runtime as rt
from runtime import nn
from runtime.nn import functional as F

# (output channels, stride) of each depthwise separable block, before the width multiplier.
DEFAULT_CONFIG = ((16, 1), (32, 2), (32, 1), (64, 2))


class DepthwiseSeparable(nn.Layer):
    """3x3 depthwise conv (groups = channels) + BN + ReLU6, then 1x1 pointwise + BN + ReLU6."""

    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.depthwise = nn.Conv2D(in_channels, in_channels, 3, stride=stride, padding=1,
                                   groups=in_channels, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(in_channels)
        self.pointwise = nn.Conv2D(in_channels, out_channels, 1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(out_channels)

    def forward(self, x: rt.Tensor) -> rt.Tensor:
        x = F.relu6(self.bn1(self.depthwise(x)))
        return F.relu6(self.bn2(self.pointwise(x)))


class MobileNet(nn.Layer):
    """Stem conv, depthwise separable blocks from `config` scaled by `width`, pooling and a
    classifier; `width` below 1 drops the channel count of every block."""

    def __init__(self, num_classes: int = 10, config=DEFAULT_CONFIG, width: float = 0.5,
                 in_channels: int = 3):
        super().__init__()
        channels = max(4, int(16 * width))
        self.stem = nn.Conv2D(in_channels, channels, 3, stride=2, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(channels)
        blocks = []
        for out_channels, stride in config:
            out_channels = max(4, int(out_channels * width))
            blocks.append(DepthwiseSeparable(channels, out_channels, stride))
            channels = out_channels
        self.blocks = nn.LayerList(blocks)
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x: rt.Tensor) -> rt.Tensor:
        x = F.relu6(self.stem_bn(self.stem(x)))
        for block in self.blocks:
            x = block(x)
        x = rt.mean(x, axis=[2, 3])
        return self.fc(x)
