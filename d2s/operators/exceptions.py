"""`raise` in converted code: at trace time, or as a `raise` op when the program runs.

A `raise` reached while tracing the top level of a function (or a branch chosen by a Python
value) raises right away, as Python would. A `raise` reached while tracing the body of a graph
`cond` branch or `while` loop becomes a `raise` op in that block: it raises the user's
exception class with the user's message when, and only when, the program runs that block.

A branch that ends in such a `raise` never hands its values to the code after the `if`, so
`ifelse` lets its results be unbound (see `branch_frame`): the other branch's values are the
`if`'s results.
"""
from __future__ import annotations

import threading

from .variables import is_variable, user_origin, where

_LOCAL = threading.local()


class Frame:
    """One traced graph branch or loop body: whether a graph `raise` ended it."""

    __slots__ = ("raised",)

    def __init__(self):
        self.raised = False


def _frames() -> list:
    frames = getattr(_LOCAL, "frames", None)
    if frames is None:
        frames = _LOCAL.frames = []
    return frames


class branch_frame:
    """`with branch_frame() as f:` around tracing one graph branch or loop body; `f.raised`
    tells afterwards whether every path through it ends in a run-time `raise`."""

    def __enter__(self) -> Frame:
        f = Frame()
        _frames().append(f)
        return f

    def __exit__(self, *exc):
        _frames().pop()
        return False


def mark_raised() -> None:
    """The innermost traced branch always raises (both branches of an inner `if` did)."""
    frames = _frames()
    if frames:
        frames[-1].raised = True


def _in_graph_block() -> bool:
    from runtime.core import active_builder
    b = active_builder()
    return b is not None and b.block is not b.program.global_block()


def raise_(exc, cause=None, src=None):
    """`raise exc [from cause]` (see the module); `src`: the user's line, when not the
    caller's."""
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        raise TypeError("exceptions must derive from BaseException")
    if not _in_graph_block():
        if cause is not None:
            raise exc from cause
        raise exc
    src = src or user_origin()
    from .try_except import helper_raise
    helper_raise(exc, src)
    if any(is_variable(a) for a in exc.args):
        raise TypeError(
            f"raise {type(exc).__name__}(...) under a tensor condition ({where(src)}) has a "
            "tensor argument: the message is fixed when the program is built. Use a Python "
            "string message; print the tensor with print() before the raise if needed.")
    from runtime.program.debug_ops import raise_error
    at = f"{_short(src.filename)}:{src.lineno}" if src is not None else ""
    raise_error(exc, at=at)
    mark_raised()


def _short(filename: str) -> str:
    import os
    return os.path.basename(filename)
