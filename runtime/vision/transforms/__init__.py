"""`rt.vision.transforms`: image preprocessing on NumPy HWC images, Paddle's names."""
from . import functional  # noqa: F401
from .transforms import (  # noqa: F401
    BaseTransform,
    CenterCrop,
    Compose,
    Normalize,
    RandomHorizontalFlip,
    Resize,
    ToTensor,
    Transpose,
)
