"""`_d2s.call(f)`: what a call from converted code really calls.

User functions, methods, nested functions, lambdas, callable objects and Layers are converted
(cached per function object), so control flow inside them becomes graph ops too; what is
never converted is the call policy's (`d2s/call_policy.py`). A function whose source cannot be
read is called unconverted (with a warning).

>>> import d2s
>>> @d2s.not_to_static
... def helper(x):
...     return x
>>> call(helper) is helper
True
"""
from __future__ import annotations

import functools
import json
import types
import warnings
import weakref

import runtime as rt
from runtime.autograd import PyLayer
from runtime.core import TensorBase, VariableBase, active_builder

from .. import guards, hidden_state
from ..call_policy import GENERATOR_FLAGS, ignored_module, never_converted, to_static_enabled
from ..errors import ConversionError
from ..pyct.parser import SourceError
from ..transpile import convert, reads_of
from .branch_callables import ChosenCallable
from .computed_keys import KEYED_METHODS, keyed_method
from .control_flow import ifelse
from . import json_calls, str_arrays
from .key_flags import checked_call, dict_pop
from .logging_calls import logging_call
from .made_sets import in_place_function, plain_set_method, unbound_set_method
from .sequence_order import comparison_call
from .set_algebra import set_method
from .try_calls import after_failure
from .try_except import open_trys
from .warning_calls import warn


def call(f):
    """The callable that converted code calls in place of `f`."""
    if not to_static_enabled():
        return f
    if type(f) is ChosenCallable:  # (`act = F.relu if x.sum() > 0 else rt.tanh`; `act(x)`)
        return functools.partial(_chosen_call, f, 0)
    receiver = getattr(f, "__self__", None)
    if isinstance(receiver, _TENSORS) and ignored_module(type(receiver).__module__):
        return f  # a Tensor's method (`x.sum` of a local that may hold a user object)
    if type(receiver) is dict and getattr(f, "__name__", "") == "pop":
        return dict_pop(receiver)  # (`d.pop(k, v)` in an expression: a key on some paths)
    if active_builder() is not None:
        if f is warnings.warn:
            return warn  # (an op: eager code warns each time it runs the line)
        if f is json.dumps:  # (the text of computed numbers, made when the program runs)
            return checked_call(f, f, json_calls.dumps)
        logged = logging_call(f)
        if logged is not None:
            return logged  # (an op: eager code logs each time it runs the line)
        seeded = _hidden_state(f)
        if seeded is not None:
            return seeded
    out = _call(f)
    # (a function not converted, given a dict with keys on some paths: refused, `key_flags`)
    checked = checked_call(f, out) if active_builder() is not None else out
    if out is f:
        return checked
    # inside a `try` body: a call made after an earlier call of the same statement may have
    # failed at run time runs only where it did not (`try_calls.after_failure`)
    return after_failure(checked) if open_trys() else checked


def _chosen_call(f: ChosenCallable, k: int, *args, **kwargs):
    """A call of the callable a tensor `if` chose: a tensor `if` per candidate."""
    fn = f.table[k]
    if k == len(f.table) - 1:
        return call(fn)(*args, **kwargs)
    return ifelse(f.index == k, lambda: call(fn)(*args, **kwargs),
                  lambda: _chosen_call(f, k + 1, *args, **kwargs), (),
                  (f"the result of {getattr(fn, '__name__', 'the chosen function')}(...)",))


_TENSORS = (TensorBase, VariableBase)
_SET_METHODS = (types.BuiltinMethodType, types.MethodWrapperType)  # (`FROZEN.__and__`)
_VIEWS = (type({}.keys()), type({}.items()))
_UNBOUND = (types.MethodDescriptorType, types.WrapperDescriptorType)  # (`frozenset.__or__`)


def _call(f):
    if getattr(type(f), "__d2s_static_function__", False):  # a StaticFunction
        inside = _for_try(f)
        if inside is not None:
            return inside
        converted = f.converted_callable()
        _guard(f.dygraph_function)
        return converted
    if isinstance(f, types.FunctionType):
        converted = _convert_function(f)
        _guard(f)
        return _guarding_arguments(f, converted)
    if isinstance(f, types.BuiltinMethodType) and type(f.__self__) is dict and \
            f.__name__ in KEYED_METHODS:
        return keyed_method(f)  # (`table.get(int(t))`: `computed_keys`)
    if isinstance(getattr(f, "__self__", None), (set, frozenset)):  # (`seen.intersection(t)`
        # of computed items: `set_algebra`; a made set's methods refuse them: `made_sets`)
        return plain_set_method(f) if isinstance(f, _SET_METHODS) else f
    if isinstance(f, types.BuiltinMethodType) and isinstance(f.__self__, _VIEWS) and \
            f.__name__ == "isdisjoint":  # (`d.keys().isdisjoint(seen)`: as a set's)
        return set_method(f)
    if isinstance(f, types.BuiltinFunctionType) and in_place_function(f) is not None:
        return in_place_function(f)  # (`operator.ior(tags, seen)`: in place, `made_sets`)
    if comparison_call(f) is not None:  # (`better(cur, best)`, `better` is `operator.lt`:
        return comparison_call(f)  # lexicographic of computed tuples, `sequence_order`)
    if isinstance(f, _UNBOUND) and f.__objclass__ in (set, frozenset):
        return unbound_set_method(f)  # (`set.intersection(seen, KNOWN)`: as `seen.intersection`)
    if isinstance(f, types.BuiltinMethodType) and type(f.__self__) is str and \
            f.__name__ == "join":
        return str_arrays.join(f)  # (of a list of strs a tensor sizes: refused)
    if isinstance(f, types.MethodType):
        if f.__func__ is _PYLAYER_APPLY and isinstance(f.__self__, type):
            return _pylayer_apply(f.__self__)
        if isinstance(f.__func__, types.FunctionType):
            converted = _convert_function(f.__func__)
            _guard(f)
            out = f if converted is f.__func__ else types.MethodType(converted, f.__self__)
            return _guarding_arguments(f, out)
        return f
    if isinstance(f, _CACHED):
        # `functools.lru_cache` / `cache`: while a program is built, its cache would keep the
        # trace's Variables (the next eager call or trace would get them back); the wrapped
        # function runs in the program instead, with the same values
        return _call(f.__wrapped__) if active_builder() is not None else f
    if isinstance(f, functools.partial):
        return functools.partial(_call(f.func), *f.args, **f.keywords)
    if isinstance(f, type):
        return guards.constructor(f)
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


_CACHED = type(functools.lru_cache(maxsize=None)(len))
_PYLAYER_APPLY = PyLayer.apply.__func__
# PyLayer subclass -> the subclass whose forward and backward are converted
_CONVERTED_PYLAYERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pylayer_apply(layer: type):
    """`SomeLayer.apply` called from converted code: the layer's `forward` and `backward`
    converted too (a tensor `if` in them becomes a graph op, in the program's forward and in
    its backward), through a subclass of the same name made once per layer."""
    converted = _CONVERTED_PYLAYERS.get(layer)
    if converted is None:
        converted = type(layer.__name__, (layer,), {
            "forward": staticmethod(_convert_function(layer.forward)),
            "backward": staticmethod(_convert_function(layer.backward)),
            "__module__": layer.__module__, "__qualname__": layer.__qualname__})
        _CONVERTED_PYLAYERS[layer] = converted
    _guard(layer.forward)
    _guard(layer.backward)
    return converted.apply
# per program being built: id -> (generator, seeded) of the random generators its trace created
_MADE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _hidden_state(f):
    """A random draw or clock read while a program is built (`d2s/hidden_state.py`) raises;
    a generator constructor is wrapped to remember what it makes. None otherwise."""
    program = active_builder().program
    try:
        constructor = f in hidden_state.SEEDED_CONSTRUCTORS
    except TypeError:  # unhashable callable
        return None
    if constructor:
        def make(*args, **kwargs):
            generator = f(*args, **kwargs)
            seed = args[0] if args else kwargs.get("seed", kwargs.get("x"))
            _MADE.setdefault(program, {})[id(generator)] = (generator, seed is not None)
            return generator
        return make
    name = hidden_state.describe(f)
    if name is None:
        return None
    made = _MADE.get(program, {}).get(id(getattr(f, "__self__", None)))
    if made is not None and made[1]:
        return None  # a generator seeded in this call draws the same numbers every call
    raise hidden_state.refuse(name, fresh_generator=made is not None)


def _for_try(f):
    """A StaticFunction called inside a `try` body: its function converted for the `try`
    (its run-time errors reach the `except`), bound to its instance; None elsewhere."""
    if not open_trys():
        return None
    raw = f.dygraph_function
    fn = getattr(raw, "__func__", raw)
    if not isinstance(fn, types.FunctionType):
        return None
    converted = _convert_function(fn)
    _guard(raw)
    instance = getattr(raw, "__self__", None) or f.instance
    return types.MethodType(converted, instance) if instance is not None else converted


def _convert_function(fn):
    if never_converted(fn) or fn.__code__.co_flags & GENERATOR_FLAGS:
        return fn
    try:
        # inside a `try` body: the conversion whose run-time errors reach its `except`
        return convert(fn, errors=bool(open_trys()))
    except SourceError as e:
        warnings.warn(f"d2s: calling {fn.__qualname__} unconverted: {e}", stacklevel=3)
        return fn


def _guard(f) -> None:
    """Record what the user function `f` (or bound method) reads from outside its arguments,
    for the guards of the program being traced (`d2s/guards.py`)."""
    fn = getattr(f, "__func__", f)
    if isinstance(fn, types.FunctionType):
        guards.record(fn, reads_of(fn), getattr(f, "__self__", None))


def _guarding_arguments(f, out):
    """`out` (what converted code calls for the user function `f`), recording as it is called
    the guards of what `f` reads through the objects it is passed (`guards.record`), where it
    reads through any and a program is being traced."""
    if guards.recorded() is None:
        return out
    fn = getattr(f, "__func__", f)
    reads = reads_of(fn)
    if reads is None:
        return out
    instance = getattr(f, "__self__", None)
    through = reads.params - {reads.self_name} if instance is not None else reads.params
    if not any(c[0] in through for c in reads.chains):
        return out

    @functools.wraps(out)
    def guarded(*args, **kwargs):
        guards.record(fn, reads, instance, guards.bind_arguments(fn, args, kwargs, instance))
        return out(*args, **kwargs)
    return guarded


def _library_forward(layer):
    """A library Layer (`Sequential`, or any layer of the runtime) holding user Layers runs
    its own `forward` converted too, so the user Layers it calls are converted like user code
    (their tensor `if`s become graph ops). None when there is no user Layer inside, or the
    library code cannot be converted."""
    fn = getattr(type(layer).forward, "__func__", type(layer).forward)
    if not isinstance(fn, types.FunctionType) or not ignored_module(fn.__module__):
        return None
    if not any(not ignored_module(type(sub).__module__) for sub in layer.sublayers()):
        return None
    try:
        return types.MethodType(convert(fn), layer)
    except (SourceError, ConversionError):
        return None


def _layer_call(layer):
    """`layer(...)` with the layer's hooks and its converted `forward`."""
    if not isinstance(layer, rt.nn.Layer):
        return None
    guards.record_hooks(layer, type(layer).__name__)
    forward = _call(layer.forward)  # (records the guards of a user forward)
    if forward is layer.forward or getattr(forward, "__func__", None) is getattr(
            layer.forward, "__func__", None):
        guards.record_library_layer(layer, type(layer).__name__)
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
