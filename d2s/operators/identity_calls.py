"""`id(obj)` and `hash(obj)` in converted code, of what the call was given.

A traced program keeps the Python numbers its trace computed. `id(metrics)` of an argument is
a number of the object the trace was given, which is not the caller's object on later calls:
a program serves every call passing containers of one structure and values
(`rebinding.py`), and a list or dict holding tensors is traced as a copy (`tracing._Feeder`).
So `id()` of a value reachable from the arguments (an argument, an item or attribute of one),
and `hash()` of one that hashes by identity (a plain object, a tensor), raise a
`ConversionError` at the user's line while tracing, never giving another object's number.
`hash()` of data (an int, a str, a tuple of them) is the value's and is kept; `id()` and
`hash()` of what the Layer, a global or a closure holds (the same objects on every call of the
program) and outside a trace are Python's.

    id(cfg)     ->   _d2s.id_(cfg)
    hash(key)   ->   _d2s.hash_(key)
"""
from __future__ import annotations

import builtins
import sys

from runtime.core import active_builder, is_eager_tensor
from runtime.program.origin import frame_line

from ..errors import ConversionError
from ..pyct import loader
from .aliases import traced_arguments
from .variables import is_variable, where

_SINGLETONS = (type(None), bool, type(Ellipsis), type(NotImplemented))
_DEPTH = 6


def id_(obj):
    """`id(obj)` (see the module)."""
    if active_builder() is not None and not isinstance(obj, _SINGLETONS) and _given(obj):
        _refuse("id", obj)
    return builtins.id(obj)


def hash_(obj):
    """`hash(obj)` (see the module)."""
    if active_builder() is not None and _by_identity(obj) and _given(obj):
        _refuse("hash", obj)
    return builtins.hash(obj)


def _by_identity(obj) -> bool:
    """Whether `obj` hashes by identity (object's own `__hash__`, a tensor's)."""
    return is_variable(obj) or is_eager_tensor(obj) or type(obj).__hash__ is object.__hash__


def _given(obj) -> bool:
    """Whether `obj` is an argument of the traced call or reachable from one (items of
    lists, tuples, dicts and sets, attributes of objects), a few levels deep."""
    target = builtins.id(obj)
    seen: set = set()
    stack = [(a, 0) for a in traced_arguments()]
    while stack:
        x, depth = stack.pop()
        if builtins.id(x) == target and x is obj:
            return True
        if builtins.id(x) in seen or depth >= _DEPTH or isinstance(x, (str, bytes, int, float)):
            continue
        seen.add(builtins.id(x))
        if isinstance(x, dict):
            items = [*x.keys(), *x.values()]
        elif isinstance(x, (list, tuple, set, frozenset)):
            items = list(x)
        elif is_variable(x) or is_eager_tensor(x) or isinstance(x, type):
            continue
        else:
            own = getattr(x, "__dict__", None)
            items = list(own.values()) if isinstance(own, dict) else []
        stack.extend((v, depth + 1) for v in items)
    return False


def _refuse(what: str, obj) -> None:
    f = sys._getframe(2)  # (the converted code's call)
    src = loader.lookup(f.f_code.co_filename, frame_line(f))
    kind = "a tensor" if is_variable(obj) or is_eager_tensor(obj) else \
        f"a {type(obj).__name__}"
    raise ConversionError(
        f"{what}() of {kind} the converted function was given ({where(src)}): one program "
        f"serves the calls that pass other objects of the same structure (and is traced with "
        f"a copy of a list or dict that holds tensors), so it would give every call the "
        f"{what} of the object it was traced with, where eager code gives this call's. Take "
        f"the {what} outside the converted function and pass it in, or key by a value (a "
        f"name or an index).", src)
