"""The call policy: which callees converted code converts, and the switch that turns
conversion off (`d2s.enable_to_static(False)`).

User functions, methods, nested functions, lambdas, callable objects and Layers are converted
(`operators/calls.py` does it); functions of the runtime, NumPy, d2s itself and the standard
library are called as they are, as are classes and built-ins, functions marked with
`not_to_static`, and functions of modules passed to `ignore_module`. Pure: it imports only
`pyct`, so the converters ask it which calls to leave as they are.

>>> import d2s
>>> @d2s.not_to_static
... def helper(x):
...     return x
>>> never_converted(helper)
True
"""
from __future__ import annotations

import inspect
import sys
import types

import runtime as rt

from .pyct import loader

_IGNORED_ROOTS = {"runtime", "d2s", "numpy", "gast", "ml_dtypes", "cupy", "pytest", "_pytest",
                  "pluggy"} | set(sys.stdlib_module_names)
_IGNORED_MODULES: set[str] = set()
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _tensor_methods() -> frozenset:
    return frozenset(n for n in dir(rt.Tensor) if not n.startswith("_"))


TENSOR_METHODS = _tensor_methods()
# Python attributes of a Tensor that converted code may set on one the program reads by
# reference (a Parameter): replayed after each call (`operators.tensor_flags`)
TENSOR_FLAGS = frozenset(("stop_gradient", "trainable", "need_clip", "optimize_attr",
                          "regularizer", "do_model_average", "persistable"))


def not_to_static(fn=None):
    """Leave `fn` unconverted wherever converted code calls it (it runs as plain Python at
    trace time; tensor ops inside still go into the program). As in Paddle, also
    `@not_to_static()`.

    >>> import d2s
    >>> @d2s.not_to_static
    ... def log_shape(x):
    ...     print(x.shape)
    """
    if fn is None:
        return not_to_static
    try:
        fn.__d2s_not_to_static__ = True
    except AttributeError:
        getattr(fn, "__func__", fn).__d2s_not_to_static__ = True
    return fn


def ignore_module(modules) -> None:
    """Never convert calls into these modules (module objects or names).

    >>> import d2s, json
    >>> d2s.ignore_module([json])
    """
    for m in modules if isinstance(modules, (list, tuple, set)) else [modules]:
        _IGNORED_MODULES.add(m if isinstance(m, str) else m.__name__)


def ignored_module(name: str | None) -> bool:
    if not name:
        return False
    if name.split(".")[0] in _IGNORED_ROOTS:
        return True
    return any(name == m or name.startswith(m + ".") for m in _IGNORED_MODULES)


def never_converted(obj) -> bool:
    """Whether calls to `obj` are known, at conversion time, never to need converting."""
    if isinstance(obj, (type, types.ModuleType, types.BuiltinFunctionType,
                        types.BuiltinMethodType, types.MethodWrapperType,
                        types.WrapperDescriptorType, types.MethodDescriptorType)):
        return True
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return (ignored_module(obj.__module__) or getattr(obj, "__d2s_not_to_static__", False)
                or loader.is_generated(obj.__code__.co_filename))
    return False


ENABLED = [True]  # d2s.enable_to_static(False) runs every StaticFunction eagerly


def to_static_enabled() -> bool:
    return ENABLED[0]
