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
from .linear import Linear  # noqa: F401
