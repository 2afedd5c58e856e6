"""Layer classes, one module per family; `rt.nn` re-exports them all."""
from .activation import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Maxout,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Silu,
    Softmax,
    Softplus,
    Softshrink,
    Softsign,
    Swish,
    Tanh,
    Tanhshrink,
    ThresholdedReLU,
)
from .common import (  # noqa: F401
    AlphaDropout,
    Dropout,
    Dropout2D,
    Dropout3D,
    Embedding,
    Flatten,
    Identity,
    Linear,
    Pad2D,
    Upsample,
    ZeroPad2D,
)
from .conv import Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose  # noqa: F401
from .distance import CosineSimilarity  # noqa: F401
from .instance_norm import InstanceNorm1D, InstanceNorm2D, InstanceNorm3D  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    CTCLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .margin_loss import (  # noqa: F401
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MultiLabelSoftMarginLoss,
    PairwiseDistance,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .norm import (  # noqa: F401
    BatchNorm,
    BatchNorm1D,
    BatchNorm2D,
    BatchNorm3D,
    GroupNorm,
    LayerNorm,
    LocalResponseNorm,
)
from .patches import ChannelShuffle, PixelShuffle, PixelUnshuffle, Unfold  # noqa: F401
from .pool import (  # noqa: F401
    AdaptiveAvgPool1D,
    AdaptiveAvgPool2D,
    AdaptiveMaxPool1D,
    AdaptiveMaxPool2D,
    AvgPool1D,
    AvgPool2D,
    MaxPool1D,
    MaxPool2D,
)
from .rnn import (  # noqa: F401
    GRU,
    LSTM,
    RNN,
    BiRNN,
    GRUCell,
    LSTMCell,
    RNNCellBase,
    SimpleRNN,
    SimpleRNNCell,
)
from .transformer import (  # noqa: F401
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .volume import AvgPool3D, Conv3D, MaxPool3D  # noqa: F401
