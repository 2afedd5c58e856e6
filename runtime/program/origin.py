"""Where an op came from: the user's file, line and source text, captured at build time.

Capturing is cheap: walk up the Python stack from the builder until the first frame whose file
is outside the `runtime` and `d2s` packages, and keep `(file, line)`; the source text is read
lazily through `linecache` when it is shown. Generated code (d2s writes converted functions to
real files) can map its lines back to the user's by setting `origin_resolver`.
"""
from __future__ import annotations

import linecache
import os
import sys
import threading
from collections.abc import Callable

_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INTERNAL_DIRS = (_RUNTIME_DIR,
                  os.path.join(os.path.dirname(os.path.dirname(_RUNTIME_DIR)), "d2s") + os.sep)

# d2s sets this to a function (filename, lineno, frame) -> (file, line, source) or None; it
# maps a line of generated code to the user line it came from (None: not generated code).
# `frame` is the frame running that line (so the resolver need not find it again).
origin_resolver: Callable | None = None


def set_origin_resolver(fn: Callable | None) -> None:
    """Install `fn(filename, lineno, frame) -> (file, line, source) | None` (None to remove)."""
    global origin_resolver
    origin_resolver = fn


def _internal(filename: str) -> bool:
    return filename.startswith(_INTERNAL_DIRS)


class _Forced(threading.local):
    at = None  # (frame, lineno)


_FORCED = _Forced()


class forced:
    """`with forced(frame, lineno):` ops built meanwhile get the origin of that user frame
    at that line (a frame an exception has already left, whose error becomes an op)."""

    def __init__(self, frame, lineno: int):
        self.at = (frame, lineno)

    def __enter__(self):
        self.outer, _FORCED.at = _FORCED.at, self.at
        return self

    def __exit__(self, *exc):
        _FORCED.at = self.outer
        return False


def capture(depth: int = 2) -> tuple | None:
    """(file, line, source) of the innermost user frame above the caller, or None."""
    if _FORCED.at is not None:
        frame, lineno = _FORCED.at
        filename = frame.f_code.co_filename
        mapped = origin_resolver(filename, lineno, frame) if origin_resolver else None
        return tuple(mapped) if mapped is not None else (filename, lineno, None)
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    cache: dict = _seen
    while f is not None:
        filename = f.f_code.co_filename
        internal = cache.get(filename)
        if internal is None:
            internal = cache[filename] = _internal(filename)
        if not internal:
            lineno = f.f_lineno
            if origin_resolver is not None:
                mapped = origin_resolver(filename, lineno, f)
                if mapped is not None:
                    return tuple(mapped)
            return (filename, lineno, None)
        f = f.f_back
    return None


_seen: dict = {}


def source_of(origin: tuple) -> str:
    """The source text of an origin (read lazily for origins captured without it)."""
    filename, lineno, source = origin
    if source is None:
        source = linecache.getline(filename, lineno).strip()
    return source


def format_origin(origin: tuple | None, indent: str = "    ") -> str:
    """'  File "model.py", line 12\\n      y = rt.matmul(x, w)' like a traceback entry."""
    if origin is None:
        return f"{indent}(no user source location recorded)"
    filename, lineno, _ = origin
    src = source_of(origin)
    out = f'{indent}File "{filename}", line {lineno}'
    return out + (f"\n{indent}  {src}" if src else "")


def short(origin: tuple | None) -> str:
    """'model.py:12' for comments in printed programs."""
    if origin is None:
        return ""
    return f"{os.path.basename(origin[0])}:{origin[1]}"
