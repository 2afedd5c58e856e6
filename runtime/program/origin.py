"""Where an op came from: the user's file, line and source text, captured at build time.

Capturing is cheap: walk up the Python stack from the builder until the first frame whose file
is outside the `runtime` and `d2s` packages, and keep `(file, line)`; the source text is read
lazily through `linecache` when it is shown. Generated code (d2s writes converted functions to
real files) can map its lines back to the user's by setting `origin_resolver`.
"""
from __future__ import annotations

import bisect
import linecache
import os
import sys
import threading
import weakref
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
    at = None  # (frame, lineno), or (None, origin) for an origin given outright


_FORCED = _Forced()


class forced:
    """`with forced(frame, lineno):` ops built meanwhile get the origin of that user frame
    at that line (a frame an exception has already left, whose error becomes an op)."""

    def __init__(self, frame, lineno: int):
        self.at = (frame, lineno)

    @classmethod
    def origin(cls, origin: tuple) -> forced:
        """`with forced.origin((file, line, source)):` ops built meanwhile get that origin
        (a user line whose frame is gone: a value read after its function returned)."""
        out = cls(None, 0)
        out.at = (None, origin)
        return out

    def __enter__(self):
        self.outer, _FORCED.at = _FORCED.at, self.at
        return self

    def __exit__(self, *exc):
        _FORCED.at = self.outer
        return False


# id(code) -> (weak reference to the code, instruction offsets, line of each): the line
# table of a long function, read once. `frame.f_lineno` decodes the code's line table from
# its start on every read, so reading it once per op built by a function of n statements
# cost time growing with n squared.
_LINE_TABLES: dict = {}
_LONG = 512  # bytes of line table (about 100 statements) from which a table is kept
_NO_LINE = object()


def frame_line(frame) -> int:
    """`frame.f_lineno`, in constant time for long functions."""
    code = frame.f_code
    if len(code.co_linetable) < _LONG or frame.f_trace is not None:
        return frame.f_lineno
    table = _LINE_TABLES.get(id(code))
    if table is None or table[0]() is not code:
        # (a range on the line of the one before adds nothing: a 10,000-line function's
        # 80,000 ranges are 9,000 lines, and the table lives as long as the code)
        starts, lines, last = [], [], _NO_LINE
        for start, _end, line in code.co_lines():
            if line != last:
                starts.append(start)
                lines.append(line)
                last = line
        key = id(code)
        table = _LINE_TABLES[key] = (
            weakref.ref(code, lambda _r, k=key: _LINE_TABLES.pop(k, None)), starts, lines)
    i = bisect.bisect_right(table[1], frame.f_lasti) - 1
    line = table[2][i] if i >= 0 else None
    return frame.f_lineno if line is None else line


def capture(depth: int = 2) -> tuple | None:
    """(file, line, source) of the innermost user frame above the caller, or None."""
    if _FORCED.at is not None:
        frame, lineno = _FORCED.at
        if frame is None:
            return lineno
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
            line = frame_line(f)
            if origin_resolver is not None:
                mapped = origin_resolver(filename, line, f)
                if mapped is not None:
                    return tuple(mapped)
            return (filename, line, None)
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
