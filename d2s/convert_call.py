"""`_d2s.call(f)`: what a call from converted code really calls.

User functions, methods, nested functions, lambdas, callable objects and Layers are converted
(cached per function object), so control flow inside them becomes graph ops too. Functions of the
runtime, NumPy, d2s itself and the standard library are called as they are, as are classes and
built-ins, functions marked with `not_to_static`, and functions of modules passed to
`ignore_module`. A function whose source cannot be read is called unconverted (with a warning).

>>> import d2s
>>> @d2s.not_to_static
... def helper(x):
...     return x
>>> call(helper) is helper
True
"""
from __future__ import annotations

import functools
import inspect
import sys
import types
import warnings

from .pyct import loader
from .pyct.parser import SourceError

_IGNORED_ROOTS = {"runtime", "d2s", "numpy", "gast", "ml_dtypes", "cupy", "pytest", "_pytest",
                  "pluggy"} | set(sys.stdlib_module_names)
_IGNORED_MODULES: set[str] = set()
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _tensor_methods() -> frozenset:
    import runtime as rt
    return frozenset(n for n in dir(rt.Tensor) if not n.startswith("_"))


TENSOR_METHODS = _tensor_methods()


def not_to_static(fn):
    """Leave `fn` unconverted wherever converted code calls it (it runs as plain Python at
    trace time; tensor ops inside still go into the program).

    >>> import d2s
    >>> @d2s.not_to_static
    ... def log_shape(x):
    ...     print(x.shape)
    """
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


def _ignored_module(name: str | None) -> bool:
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
        return (_ignored_module(obj.__module__) or getattr(obj, "__d2s_not_to_static__", False)
                or loader.is_generated(obj.__code__.co_filename))
    return False


def call(f):
    """The callable that converted code calls in place of `f`."""
    from .static_function import StaticFunction, to_static_enabled
    if not to_static_enabled():
        return f
    if isinstance(f, StaticFunction):
        converted = f.converted_callable()
        _guard(f.dygraph_function)
        return converted
    if isinstance(f, types.FunctionType):
        converted = _convert_function(f)
        _guard(f)
        return converted
    if isinstance(f, types.MethodType):
        if isinstance(f.__func__, types.FunctionType):
            converted = _convert_function(f.__func__)
            _guard(f)
            return f if converted is f.__func__ else types.MethodType(converted, f.__self__)
        return f
    if isinstance(f, functools.partial):
        return functools.partial(call(f.func), *f.args, **f.keywords)
    if never_converted(f) or not callable(f):
        return f
    layer_call = _layer_call(f)
    if layer_call is not None:
        return layer_call
    call_method = type(f).__dict__.get("__call__") if callable(f) else None
    if isinstance(call_method, types.FunctionType) and not never_converted(call_method):
        converted = types.MethodType(_convert_function(call_method), f)
        _guard(types.MethodType(call_method, f))
        return converted
    return f


def _convert_function(fn):
    if never_converted(fn) or fn.__code__.co_flags & _GENERATOR_FLAGS:
        return fn
    from .transpile import convert
    try:
        return convert(fn)
    except SourceError as e:
        warnings.warn(f"d2s: calling {fn.__qualname__} unconverted: {e}", stacklevel=3)
        return fn


def _guard(f) -> None:
    """Record what the user function `f` (or bound method) reads from outside its arguments,
    for the guards of the program being traced (`d2s/guards.py`)."""
    fn = getattr(f, "__func__", f)
    if isinstance(fn, types.FunctionType):
        from . import guards
        from .transpile import reads_of
        guards.record(fn, reads_of(fn), getattr(f, "__self__", None))


def _library_forward(layer):
    """A library Layer (`Sequential`, or any layer of the runtime) holding user Layers runs
    its own `forward` converted too, so the user Layers it calls are converted like user code
    (their tensor `if`s become graph ops). None when there is no user Layer inside, or the
    library code cannot be converted."""
    fn = getattr(type(layer).forward, "__func__", type(layer).forward)
    if not isinstance(fn, types.FunctionType) or not _ignored_module(fn.__module__):
        return None
    if not any(not _ignored_module(type(sub).__module__) for sub in layer.sublayers()):
        return None
    from .errors import ConversionError
    from .transpile import convert
    try:
        return types.MethodType(convert(fn), layer)
    except (SourceError, ConversionError):
        return None


def _layer_call(layer):
    """`layer(...)` with the layer's hooks and its converted `forward`."""
    import runtime as rt
    if not isinstance(layer, rt.nn.Layer):
        return None
    forward = call(layer.forward)  # (records the guards of a user forward)
    if forward is layer.forward or getattr(forward, "__func__", None) is getattr(
            layer.forward, "__func__", None):
        forward = _library_forward(layer) or forward

    def run(*inputs, **kwargs):
        for hook in list(layer._forward_pre_hooks.values()):
            result = hook(layer, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        outputs = forward(*inputs, **kwargs)
        for hook in list(layer._forward_post_hooks.values()):
            result = hook(layer, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    return run
