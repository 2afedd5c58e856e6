"""LeNet-5 for digit images (8x8 from scikit-learn or 28x28 MNIST-sized).

>>> import runtime as rt
>>> from d2s.demo.lenet import LeNet
>>> LeNet(image_size=8)(rt.zeros([2, 1, 8, 8])).shape
[2, 10]
"""
from __future__ import annotations

import runtime as rt
from runtime import nn
from runtime.nn import functional as F


class LeNet(nn.Layer):
    """Two conv + pool stages and three linear layers. Small images (8x8) skip the second
    pooling, chosen in `forward` by a Python condition on the configured size."""

    def __init__(self, num_classes: int = 10, image_size: int = 28, in_channels: int = 1):
        super().__init__()
        if image_size not in (8, 28):
            raise ValueError(f"LeNet: image_size must be 8 or 28, got {image_size}")
        self.image_size = image_size
        self.conv1 = nn.Conv2D(in_channels, 6, 3, padding=1)
        self.conv2 = nn.Conv2D(6, 16, 3 if image_size == 8 else 5)
        side = 2 if image_size == 8 else 5
        self.fc1 = nn.Linear(16 * side * side, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x: rt.Tensor) -> rt.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        if self.image_size == 28:
            x = F.max_pool2d(x, 2)
        x = rt.flatten(x, start_axis=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)
