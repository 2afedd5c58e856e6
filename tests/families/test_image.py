"""Image classification families: ResNet (bottleneck-free basic blocks), MobileNet v1
(depthwise-separable convs) and v2 (inverted residuals with linear bottlenecks), written as
Paddle users write them (BatchNorm with act=, Sequential stacks, Paddle keyword names), small
sizes. See harness.py for what is checked."""
import numpy as np

import runtime as rt
import runtime.nn as nn
import runtime.nn.functional as F

from .harness import check_family


class ConvBN(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, groups=1, act="relu"):
        super().__init__()
        self._conv = nn.Conv2D(cin, cout, k, stride=stride, padding=(k - 1) // 2, groups=groups,
                               bias_attr=False)
        self._bn = nn.BatchNorm(cout, act=act)

    def forward(self, x):
        return self._bn(self._conv(x))


class BasicBlock(nn.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv0 = ConvBN(cin, cout, 3, stride)
        self.conv1 = ConvBN(cout, cout, 3, act=None)
        self.short = None if stride == 1 and cin == cout else ConvBN(cin, cout, 1, stride,
                                                                      act=None)

    def forward(self, x):
        y = self.conv1(self.conv0(x))
        short = x if self.short is None else self.short(x)
        return F.relu(rt.add(y, short))


class ResNet(nn.Layer):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = ConvBN(3, 8, 3)
        self.pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks = []
        for cin, cout, stride in ((8, 8, 1), (8, 16, 2)):
            blocks.append(BasicBlock(cin, cout, stride))
        self.blocks = nn.Sequential(*blocks)
        self.gap = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, img):
        y = self.gap(self.blocks(self.pool(self.stem(img))))
        return F.softmax(self.fc(rt.flatten(y, 1)))


class DepthwiseSeparable(nn.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = ConvBN(cin, cin, 3, stride, groups=cin)
        self.pw = ConvBN(cin, cout, 1)

    def forward(self, x):
        return self.pw(self.dw(x))


class MobileNetV1(nn.Layer):
    def __init__(self, classes=5, scale=1.0):
        super().__init__()
        c = [int(v * scale) for v in (8, 16, 16)]
        self.conv1 = ConvBN(3, c[0], 3, 2)
        self.dws = nn.LayerList([DepthwiseSeparable(c[0], c[1], 1),
                                 DepthwiseSeparable(c[1], c[2], 2)])
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.out = nn.Linear(c[2], classes)

    def forward(self, x):
        y = self.conv1(x)
        for block in self.dws:
            y = block(y)
        y = rt.reshape(self.pool(y), [-1, y.shape[1]])
        return F.softmax(self.out(y))


class InvertedResidual(nn.Layer):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.expand = ConvBN(cin, hidden, 1, act="relu6")
        self.dw = ConvBN(hidden, hidden, 3, stride, groups=hidden, act="relu6")
        self.project = ConvBN(hidden, cout, 1, act=None)

    def forward(self, x):
        y = self.project(self.dw(self.expand(x)))
        return x + y if self.use_res else y


class MobileNetV2(nn.Layer):
    def __init__(self, classes=5):
        super().__init__()
        self.first = ConvBN(3, 8, 3, 2, act="relu6")
        settings = [(1, 8, 1, 1), (4, 12, 2, 2)]  # t, c, n, s
        layers, cin = [], 8
        for t, c, n, s in settings:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        self.features = nn.Sequential(*layers)
        self.last = ConvBN(cin, 24, 1, act="relu6")
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(24, classes)

    def forward(self, x):
        y = F.adaptive_avg_pool2d(self.last(self.features(self.first(x))), 1)
        return F.softmax(self.fc(self.drop(rt.flatten(y, 1))))


def image_batch(rng, n, classes=5, size=12):
    return (rng.standard_normal((n, 3, size, size)).astype("float32"),
            rng.integers(0, classes, (n, 1)).astype("int64"))


def classify_loss(model, img, label):
    prob = model(img)
    loss = F.cross_entropy(prob, label, use_softmax=False)
    acc = rt.metric.accuracy(prob, label)  # as Paddle's training loops log it
    assert 0.0 <= float(acc) <= 1.0
    return loss


def test_resnet(tmp_path):
    check_family(tmp_path, ResNet, image_batch, classify_loss, 1, opt_cls=rt.optimizer.Momentum,
                 lr=0.05)


def test_mobilenet_v1(tmp_path):
    check_family(tmp_path, MobileNetV1, image_batch, classify_loss, 1)


def test_mobilenet_v2(tmp_path):
    rt.seed(0)
    check_family(tmp_path, MobileNetV2, image_batch, classify_loss, 1, seed=1)


def test_image_models_are_deterministic_in_eval():
    rt.seed(0)
    net = MobileNetV2()
    net.eval()
    x = rt.to_tensor(image_batch(np.random.default_rng(0), 2)[0])
    np.testing.assert_array_equal(net(x).numpy(), net(x).numpy())
