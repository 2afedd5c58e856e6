"""Layer classes, one module per family; `rt.nn` re-exports them all."""
from .activation import (  # noqa: F401
    GELU,
    Hardswish,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    Silu,
    Softmax,
    Softplus,
    Swish,
    Tanh,
)
from .common import Dropout, Embedding, Flatten, Identity, Linear, Pad2D, Upsample  # noqa: F401
from .conv import Conv1D, Conv2D, Conv2DTranspose  # noqa: F401
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401
from .norm import BatchNorm, BatchNorm1D, BatchNorm2D, BatchNorm3D, GroupNorm, LayerNorm  # noqa: F401
from .pool import AdaptiveAvgPool1D, AdaptiveAvgPool2D, AvgPool1D, AvgPool2D, MaxPool1D, MaxPool2D  # noqa: F401
from .rnn import GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN, SimpleRNNCell  # noqa: F401
from .transformer import (  # noqa: F401
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
