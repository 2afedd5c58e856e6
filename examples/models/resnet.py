"""A small ResNet: basic blocks with batch norm; the shortcut of each block is a projection or
the identity, chosen by a Python condition on the block's configuration.

>>> import runtime as rt
>>> from examples.models import ResNet
>>> ResNet(widths=(8, 16), blocks_per_stage=1)(rt.zeros([2, 3, 16, 16])).shape
[2, 10]
"""
from __future__ import annotations

import runtime as rt
from runtime import nn
from runtime.nn import functional as F


class BasicBlock(nn.Layer):
    """conv-bn-relu-conv-bn plus a shortcut; a 1x1 conv projects the shortcut only where the
    stride or the channel count changes."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2D(in_channels, out_channels, 3, stride=stride, padding=1,
                               bias_attr=False)
        self.bn1 = nn.BatchNorm2D(out_channels)
        self.conv2 = nn.Conv2D(out_channels, out_channels, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(out_channels)
        self.project = stride != 1 or in_channels != out_channels
        if self.project:
            self.shortcut = nn.Sequential(
                nn.Conv2D(in_channels, out_channels, 1, stride=stride, bias_attr=False),
                nn.BatchNorm2D(out_channels))

    def forward(self, x: rt.Tensor) -> rt.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.project:
            identity = self.shortcut(x)
        else:
            identity = x
        return F.relu(out + identity)


class ResNet(nn.Layer):
    """A stem, one stage of basic blocks per width (the first block of each later stage
    downsamples), global average pooling and a classifier."""

    def __init__(self, num_classes: int = 10, widths: tuple = (8, 16),
                 blocks_per_stage: int = 2, in_channels: int = 3):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2D(in_channels, widths[0], 3, padding=1, bias_attr=False),
            nn.BatchNorm2D(widths[0]), nn.ReLU())
        blocks = []
        channels = widths[0]
        for stage, width in enumerate(widths):
            for i in range(blocks_per_stage):
                stride = 2 if stage > 0 and i == 0 else 1
                blocks.append(BasicBlock(channels, width, stride))
                channels = width
        self.blocks = nn.LayerList(blocks)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x: rt.Tensor) -> rt.Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = rt.flatten(self.pool(x), start_axis=1)
        return self.fc(x)
