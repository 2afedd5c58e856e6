"""MobileNetV2 (Sandler et al., 2018) at Paddle's names: `MobileNetV2(scale, num_classes,
with_pool)` and `mobilenet_v2(pretrained=False, scale=1.0, **kwargs)`.

Inverted residual blocks: a 1x1 expansion (by `t`), a 3x3 depthwise convolution carrying the
stride, and a linear 1x1 projection; the input is added back where shape allows. Channel
counts are scaled by `scale` and rounded to multiples of 8, as in the paper's code.
"""
from __future__ import annotations

from ... import nn
from ...ops.shape import flatten
from ._pretrained import refuse_pretrained

# (expansion t, output channels c, blocks n, first stride s) per stage, from the paper
_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
           (6, 160, 3, 2), (6, 320, 1, 1))


def _divisible(value: float, divisor: int = 8) -> int:
    """`value` rounded to a multiple of `divisor`, never more than 10% below it."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _conv_bn_relu6(in_channels: int, out_channels: int, kernel: int = 3, stride: int = 1,
                   groups: int = 1):
    return nn.Sequential(
        nn.Conv2D(in_channels, out_channels, kernel, stride=stride, padding=(kernel - 1) // 2,
                  groups=groups, bias_attr=False),
        nn.BatchNorm2D(out_channels), nn.ReLU6())


class InvertedResidual(nn.Layer):
    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
        super().__init__()
        hidden = round(inp * expand_ratio)
        self.use_residual = stride == 1 and inp == oup
        layers = [_conv_bn_relu6(inp, hidden, kernel=1)] if expand_ratio != 1 else []
        layers += [_conv_bn_relu6(hidden, hidden, stride=stride, groups=hidden),
                   nn.Conv2D(hidden, oup, 1, bias_attr=False), nn.BatchNorm2D(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_residual:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Layer):
    """MobileNetV2 for NCHW images; `num_classes <= 0` leaves out the classifier,
    `with_pool=False` the global average pooling.

    >>> import runtime as rt
    >>> rt.vision.models.MobileNetV2(scale=0.5, num_classes=7)(rt.zeros([1, 3, 32, 32])).shape
    [1, 7]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        channels = _divisible(32 * scale)
        self.last_channel = _divisible(1280 * max(1.0, scale))
        layers = [_conv_bn_relu6(3, channels, stride=2)]
        for t, c, n, s in _STAGES:
            out = _divisible(c * scale)
            for i in range(n):
                layers.append(InvertedResidual(channels, out, s if i == 0 else 1, t))
                channels = out
        layers.append(_conv_bn_relu6(channels, self.last_channel, kernel=1))
        self.features = nn.Sequential(*layers)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2),
                                            nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


def mobilenet_v2(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV2:
    """MobileNetV2 with width multiplier `scale`; kwargs go to `MobileNetV2`."""
    refuse_pretrained("mobilenet_v2", pretrained)
    return MobileNetV2(scale=scale, **kwargs)
