"""The high-level API (Paddle's `paddle.hapi`): `Model` with `fit` / `evaluate` / `predict`,
its callbacks, and `summary` / `flops` of a network. Public as `rt.Model`, `rt.callbacks`,
`rt.summary`, `rt.flops`.

Each loads on first access: `import d2s` registers its converter in `static_converter` without
loading `Model` (and `nn`, `optimizer`, `io` behind it)."""
import sys
import types

from ..lazy_names import lazy_names as _lazy_names
from .static_converter import ConverterMissingError

__all__ = ["ConverterMissingError", "Model", "callbacks", "flops", "summary"]

_LAZY = {"callbacks": (".callbacks", None), "flops": (".flops", "flops"),
         "Model": (".model", "Model"), "summary": (".summary", "summary")}


__getattr__, __dir__ = _lazy_names(__name__, _LAZY)


class _Package(types.ModuleType):
    """`runtime.hapi.summary` and `.flops` stay the functions: importing the submodules of the
    same names (as `Model` does) would otherwise bind the modules here."""

    def __setattr__(self, name, value):
        if name in ("flops", "summary") and isinstance(value, types.ModuleType):
            value = getattr(value, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
