"""VGG (Simonyan and Zisserman, 2014) at Paddle's names: `VGG(features, num_classes,
with_pool)` and `vgg16(pretrained=False, batch_norm=False, **kwargs)`.

`features` is the convolutional part (3x3 convolutions and 2x2 max pools, configuration D for
VGG-16); the classifier is 4096-4096-num_classes over a 7x7 adaptive average pool.
"""
from __future__ import annotations

from ... import nn
from ...ops.shape import flatten
from ._pretrained import refuse_pretrained

_VGG16 = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
          512, 512, 512, "M")


def make_features(config, batch_norm: bool = False) -> nn.Sequential:
    """The convolutional layers of a VGG configuration ("M" is a 2x2 max pool)."""
    layers, channels = [], 3
    for item in config:
        if item == "M":
            layers.append(nn.MaxPool2D(2, 2))
            continue
        layers.append(nn.Conv2D(channels, item, 3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2D(item))
        layers.append(nn.ReLU())
        channels = item
    return nn.Sequential(*layers)


class VGG(nn.Layer):
    """`features`, a 7x7 average pool (`with_pool`) and the classifier (`num_classes > 0`).

    >>> import runtime as rt
    >>> from runtime.vision.models import VGG
    >>> features = rt.nn.Sequential(rt.nn.Conv2D(3, 512, 3, padding=1), rt.nn.MaxPool2D(2, 2))
    >>> VGG(features, num_classes=3)(rt.zeros([1, 3, 8, 8])).shape
    [1, 3]
    """

    def __init__(self, features: nn.Layer, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.features = features
        self.num_classes, self.with_pool = num_classes, with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


def vgg16(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-16 (configuration D), with batch norm after each convolution if `batch_norm`."""
    refuse_pretrained("vgg16", pretrained)
    return VGG(make_features(_VGG16, batch_norm), **kwargs)
