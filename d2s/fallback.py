"""`to_static(full_graph=False)`: a function that cannot become a program runs eagerly.

When converting or tracing a `full_graph=False` StaticFunction fails, the call is run by the
original Python function instead. If that succeeds, d2s warns once, naming the user line and
the reason, and remembers the decision: every later call of that function (any instance, any
input) runs eagerly without trying again. If the eager call raises too, the error is the
user's own and is raised as it is. Errors while *running* a built program are not caught: the
program was built, so they are real errors (a shape that does not fit, a failed assert).

With `full_graph=True` (the default) nothing here applies: the conversion error is raised.
Paddle's `full_graph=False` translates bytecode (SOT) and breaks the graph around what it
cannot capture, keeping the rest static; d2s has no bytecode path, so it falls back for the
whole function (docs/d2s.md, "full_graph").
"""
from __future__ import annotations

import os
import threading
import warnings
import weakref

from . import errors

# original function -> the reason it runs eagerly (weak: dies with the function)
_EAGER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _unlock_in_child() -> None:  # (a fork while another thread held it: see transpile.py)
    global _LOCK
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_unlock_in_child)
ANY = [False]  # whether any function was ever sent to eager mode (a fast test for call paths)


def runs_eagerly(function) -> bool:
    """Whether `function` (a StaticFunction's original function) was sent to eager mode."""
    return ANY[0] and function in _EAGER  # (`in` on a WeakKeyDictionary makes a weakref)


def reason(function) -> str | None:
    """The warning text that sent `function` to eager mode, or None."""
    return _EAGER.get(function)


def fall_back(sf, error: BaseException, args: tuple, kwargs: dict):
    """The eager result of a call whose conversion or trace raised `error`: warn once and
    remember the decision if the eager call succeeds, raise its error if not."""
    result = sf.dygraph_function(*args, **kwargs)  # the user's own errors raise from here
    text = _warning(sf, error)
    with _LOCK:
        first = sf.__wrapped__ not in _EAGER  # the user's function (unbound for a method)
        _EAGER[sf.__wrapped__] = text
        ANY[0] = True
    if first:
        warnings.warn(text, UserWarning, stacklevel=3)
    return result


def _warning(sf, error: BaseException) -> str:
    error = errors.for_user(error)
    frames = errors.user_frames(error)
    where = ""
    if frames:
        f = frames[-1]
        where = f" at {f.filename}:{f.lineno}" + (f" ({f.source})" if f.source else "")
    first_line = str(error).splitlines()[0].split(". ")[0] if str(error) else ""
    return (f"d2s: {sf.__qualname__} cannot be converted{where}: {type(error).__name__}: "
            f"{first_line} -- it runs eagerly from now on (to_static(full_graph=False)); "
            "use full_graph=True to get the error instead, and see docs/errors.md for how to "
            "make it convertible")
