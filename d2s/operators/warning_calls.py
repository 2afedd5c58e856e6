"""`warnings.warn(...)` in converted code: an op that warns when the program runs it.

Eager code warns each time it runs the line (the filters then decide what shows: once per
line by default, every time under `simplefilter("always")`), and only on the branch taken.
Called while tracing, Python's `warn` would run once, on both branches of a tensor `if`, and
never again; so converted code binds a `py_warn` op (`runtime.program.debug_ops`) with the
message, the category and the line eager code would show, which calls
`warnings.warn_explicit` as raised at that line of the user's module.

    warnings.warn("clipping", RuntimeWarning)   ->   _d2s.call(warnings.warn)(...)
                                                       (a py_warn op where a program is built)
"""
from __future__ import annotations

import sys

import runtime as rt
from runtime.program.origin import frame_line

from ..errors import ConversionError
from ..pyct import loader
from .variables import user_origin, where


def warn(message, category=None, stacklevel=1, source=None, **kwargs):
    """`warnings.warn` while a program is built (see the module)."""
    if isinstance(message, Warning):
        category, message = type(message), str(message)
    if not isinstance(message, str):
        src = user_origin()
        raise ConversionError(
            f"warnings.warn() ({where(src)}) with a message of type {type(message).__name__} "
            "in a function converted by d2s.to_static: the message must be a str (its "
            "text is made when the program is built)", src)
    rt.static.py_warn(message, category or UserWarning, *_location(max(int(stacklevel), 1)))


def _location(stacklevel: int) -> tuple:
    """(file, line, module) eager's `warn` shows for `stacklevel`: the user's line calling it
    (1), the line of the converted function `stacklevel - 1` calls out that made the call,
    and past the outermost one, the frames that called it (as they are while tracing)."""
    f, files, level = sys._getframe(2), [], 0
    while f is not None:
        src = loader.lookup(f.f_code.co_filename, frame_line(f))
        name = f.f_globals.get("__name__", "")
        if src is not None and (not files or files[-1] != f.f_code.co_filename):
            files.append(f.f_code.co_filename)  # (a converted function: one generated file)
            level += 1
            if level == stacklevel:
                return src.filename, src.lineno, name
        elif src is None and files and name.split(".")[0] not in ("d2s", "runtime"):
            level += 1
            if level == stacklevel:
                return f.f_code.co_filename, f.f_lineno, name
        f = f.f_back
    return "sys", 1, "sys"  # (Python's own location past the outermost frame)
