"""`rt.vision.models`: image classifiers at Paddle's names and signatures (`LeNet`,
`resnet18/34/50`, `mobilenet_v2`, `vgg16`). Weights start from the initializers: there is
nothing to download, and `pretrained=True` raises.

>>> import runtime as rt
>>> model = rt.vision.models.resnet18(num_classes=10)
>>> model(rt.zeros([1, 3, 32, 32])).shape
[1, 10]
"""
from .lenet import LeNet  # noqa: F401
from .mobilenetv2 import MobileNetV2, mobilenet_v2  # noqa: F401
from .resnet import BasicBlock, BottleneckBlock, ResNet, resnet18, resnet34, resnet50  # noqa: F401
from .vgg import VGG, vgg16  # noqa: F401
