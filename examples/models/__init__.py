"""A model zoo: eager `rt.nn.Layer`s whose `forward` uses ordinary Python control flow, each
tested eager vs `d2s.to_static` in tests/models/.

>>> from examples.models import LeNet
>>> LeNet(image_size=8).fc3.weight.shape
[84, 10]
"""
from .lenet import LeNet  # noqa: F401
