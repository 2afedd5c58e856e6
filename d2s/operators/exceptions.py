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

import os

from runtime.core import active_builder
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from . import tensor_flags
from .trace_state import current
from .variables import is_variable, user_origin, where


class Frame:
    """One traced graph branch or loop body: whether a graph `raise` ended it."""

    __slots__ = ("raised",)

    def __init__(self):
        self.raised = False


class branch_frame:
    """`with branch_frame() as f:` around tracing one graph branch or loop body; `f.raised`
    tells afterwards whether every path through it ends in a run-time `raise`."""

    def __enter__(self) -> Frame:
        f = Frame()
        current().frames.append(f)
        self.flags = tensor_flags.watched_now()
        return f

    def __exit__(self, kind, *exc):
        current().frames.pop()
        if kind is None:
            tensor_flags.refuse_changed_in_block(self.flags)
        return False


def mark_raised() -> None:
    """The innermost traced branch always raises (both branches of an inner `if` did)."""
    frames = current().frames
    if frames:
        frames[-1].raised = True


def in_graph_block() -> bool:
    """Whether a graph branch or loop body (not the program's top level) is being traced."""
    b = active_builder()
    return b is not None and b.block is not b.program.global_block()


def raise_(exc, cause=None, src=None):
    """`raise exc [from cause]` (see the module); `src`: the user's line, when not the
    caller's."""
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        raise TypeError("exceptions must derive from BaseException")
    if not in_graph_block():
        if cause is not None:
            raise exc from cause
        raise exc
    src = src or user_origin()
    helper_raise(exc, src)
    if any(is_variable(a) for a in exc.args):
        raise TypeError(
            f"raise {type(exc).__name__}(...) under a tensor condition ({where(src)}) has a "
            "tensor argument: the message is fixed when the program is built. Use a Python "
            "string message; print the tensor with print() before the raise if needed.")
    at = f"{short_name(src.filename)}:{src.lineno}" if src is not None else ""
    raise_error(exc, at=at)
    mark_raised()


def helper_raise(exc, src) -> None:
    """A run-time `raise` in a function called from an open `try` body whose clauses would
    catch it: the program raises it outside that `try`, so it is a conversion error."""
    for state in reversed(current().trys):
        if state.catches(exc):
            raise ConversionError(
                f"raise {type(exc).__name__}(...) under a tensor condition ({where(src)}), in "
                f"code called inside a `try` whose `except` would catch it "
                f"({where(state.src)}), but that code is not converted for the `try` (it "
                "is called through code d2s does not convert, or defined in a class body): "
                "the program would raise it past the `except`. Call the function from the "
                "`try` body or a converted function, or return a flag and raise in the "
                "function with the `try`.", origin=src)


def short_name(filename: str) -> str:
    """The file's base name, as a `raise` op reports where it was raised."""
    return os.path.basename(filename)
