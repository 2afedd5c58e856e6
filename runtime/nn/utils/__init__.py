"""`rt.nn.utils`: helpers used around training steps (`clip_grad_norm_`)."""
from .clip_grad import clip_grad_norm_  # noqa: F401
