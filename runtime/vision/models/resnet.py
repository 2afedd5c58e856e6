"""ResNet (He et al., 2015) at Paddle's names: `ResNet(block, depth, num_classes, with_pool)`,
`resnet18`, `resnet34` (basic blocks) and `resnet50` (bottleneck blocks), for NCHW images.

The stages follow the paper: a 7x7 stride-2 stem and a 3x3 max pool, four stages of 64, 128,
256 and 512 base channels (the later three start with stride 2), global average pooling and a
classifier. A block's shortcut is a 1x1 projection where its stride or width changes.
"""
from __future__ import annotations

from ... import nn
from ...ops.shape import flatten
from ._pretrained import refuse_pretrained


def _conv_bn(in_channels: int, out_channels: int, kernel: int, stride: int = 1):
    return nn.Sequential(
        nn.Conv2D(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2,
                  bias_attr=False),
        nn.BatchNorm2D(out_channels))


class BasicBlock(nn.Layer):
    """Two 3x3 convolutions; output channels = planes."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = _conv_bn(inplanes, planes, 3, stride)
        self.conv2 = _conv_bn(planes, planes, 3)
        self.relu = nn.ReLU()
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.conv2(self.relu(self.conv1(x)))
        return self.relu(out + identity)


class BottleneckBlock(nn.Layer):
    """1x1 reduce, 3x3 (with the stride), 1x1 expand; output channels = 4 * planes."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = _conv_bn(inplanes, planes, 1)
        self.conv2 = _conv_bn(planes, planes, 3, stride)
        self.conv3 = _conv_bn(planes, planes * self.expansion, 1)
        self.relu = nn.ReLU()
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.conv2(self.relu(self.conv1(x))))
        return self.relu(self.conv3(out) + identity)


_BLOCKS_PER_STAGE = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3),
                     152: (3, 8, 36, 3)}


class ResNet(nn.Layer):
    """A ResNet of `depth` (18, 34, 50, 101 or 152) built from `block`. `num_classes <= 0`
    leaves out the classifier; `with_pool=False` the global average pooling.

    >>> import runtime as rt
    >>> from runtime.vision.models import BasicBlock, ResNet
    >>> ResNet(BasicBlock, 18, num_classes=5)(rt.zeros([1, 3, 32, 32])).shape
    [1, 5]
    """

    def __init__(self, block, depth: int = 50, width: int = 64, num_classes: int = 1000,
                 with_pool: bool = True, groups: int = 1):
        super().__init__()
        if depth not in _BLOCKS_PER_STAGE:
            raise ValueError(f"ResNet: depth must be one of {sorted(_BLOCKS_PER_STAGE)}, got "
                             f"{depth}")
        if width != 64 or groups != 1:
            raise ValueError("ResNet: only width=64 and groups=1 (the standard ResNets) are "
                             f"built here, got width={width}, groups={groups}")
        self.num_classes, self.with_pool = num_classes, with_pool
        self.stem = nn.Sequential(_conv_bn(3, 64, 7, 2), nn.ReLU(), nn.MaxPool2D(3, 2, 1))
        self._inplanes = 64
        stages = []
        for i, blocks in enumerate(_BLOCKS_PER_STAGE[depth]):
            stages.append(self._stage(block, 64 * 2 ** i, blocks, 1 if i == 0 else 2))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _stage(self, block, planes: int, blocks: int, stride: int):
        downsample = None
        if stride != 1 or self._inplanes != planes * block.expansion:
            downsample = _conv_bn(self._inplanes, planes * block.expansion, 1, stride)
        layers = [block(self._inplanes, planes, stride, downsample)]
        self._inplanes = planes * block.expansion
        layers += [block(self._inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.layer4(self.layer3(self.layer2(self.layer1(self.stem(x)))))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


def _resnet(name: str, block, depth: int, pretrained: bool, **kwargs) -> ResNet:
    refuse_pretrained(name, pretrained)
    return ResNet(block, depth, **kwargs)


def resnet18(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-18 (basic blocks 2-2-2-2); kwargs go to `ResNet` (num_classes, with_pool)."""
    return _resnet("resnet18", BasicBlock, 18, pretrained, **kwargs)


def resnet34(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-34 (basic blocks 3-4-6-3)."""
    return _resnet("resnet34", BasicBlock, 34, pretrained, **kwargs)


def resnet50(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-50 (bottleneck blocks 3-4-6-3)."""
    return _resnet("resnet50", BottleneckBlock, 50, pretrained, **kwargs)
