"""The high-level API (Paddle's `paddle.hapi`): `Model` with `fit` / `evaluate` / `predict`,
its callbacks, and `summary` / `flops` of a network. Public as `rt.Model`, `rt.callbacks`,
`rt.summary`, `rt.flops`."""
from . import callbacks
from .flops import flops
from .model import Model
from .static_converter import ConverterMissingError
from .summary import summary

__all__ = ["ConverterMissingError", "Model", "callbacks", "flops", "summary"]
