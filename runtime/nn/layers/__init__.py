"""Layer classes, one module per family; `rt.nn` re-exports them all."""
from .activation import (  # noqa: F401
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    Silu,
    Softmax,
    Softplus,
    Tanh,
)
from .common import Dropout, Flatten, Identity  # noqa: F401
from .conv import Conv1D, Conv2D, Conv2DTranspose  # noqa: F401
from .embedding import Embedding  # noqa: F401
from .linear import Linear  # noqa: F401
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401
from .norm import BatchNorm1D, BatchNorm2D, GroupNorm, LayerNorm  # noqa: F401
from .pool import AdaptiveAvgPool2D, AvgPool2D, MaxPool2D  # noqa: F401
from .rnn import GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN, SimpleRNNCell  # noqa: F401
from .transformer import MultiHeadAttention, TransformerEncoder, TransformerEncoderLayer  # noqa: F401
