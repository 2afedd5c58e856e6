"""A model zoo: eager `rt.nn.Layer`s whose `forward` uses ordinary Python control flow, each
tested eager vs `d2s.to_static` in tests/models/ and timed in benchmarks/models.py.

>>> from examples.models import LeNet
>>> LeNet(image_size=8).fc3.weight.shape
[84, 10]
"""
from .bert import BertClassifier  # noqa: F401
from .deepfm import DeepFM  # noqa: F401
from .lenet import LeNet  # noqa: F401
from .lstm_lm import LSTMLanguageModel  # noqa: F401
from .mobilenet import MobileNet  # noqa: F401
from .resnet import ResNet  # noqa: F401
from .seq2seq import Seq2Seq  # noqa: F401
from .speech import SpeechClassifier  # noqa: F401
