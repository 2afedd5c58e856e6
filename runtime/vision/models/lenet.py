"""LeNet-5 at Paddle's name and signature (`rt.vision.models.LeNet(num_classes=10)`), for
1x28x28 digit images."""
from __future__ import annotations

from ... import nn
from ...ops.shape import flatten


class LeNet(nn.Layer):
    """conv(1->6, 3, pad 1)-relu-maxpool, conv(6->16, 5)-relu-maxpool, then 400-120-84 fully
    connected layers and a classifier (`num_classes <= 0` leaves the classifier out).

    >>> import runtime as rt
    >>> rt.vision.models.LeNet()(rt.zeros([2, 1, 28, 28])).shape
    [2, 10]
    """

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        if num_classes > 0:
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84),
                                    nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x
