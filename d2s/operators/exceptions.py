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
import sys

import runtime as rt
from runtime.core import active_builder
from runtime.program import origin as _origin
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError, raised_by_user_code, raised_in_converted_code
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


_NO_CAUSE = object()  # (`raise exc`, as opposed to `raise exc from None`)


def raise_(exc, cause=_NO_CAUSE, src=None, handled=True):
    """`raise exc [from cause]` (see the module); `src`: the user's line, when not the
    caller's; `handled`: whether an exception the user's code is handling is its context (not
    where d2s raises an error of the trace's again, `block_values.raise_when_run`)."""
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        raise TypeError("exceptions must derive from BaseException")
    if not in_graph_block():
        if cause is not _NO_CAUSE:
            raise exc from cause
        raise exc
    src = src or user_origin()
    helper_raise(exc, src)
    if any(is_variable(a) for a in exc.args):
        raise TypeError(
            f"raise {type(exc).__name__}(...) under a tensor condition ({where(src)}) has a "
            "tensor argument: the message is fixed when the program is built. Use a Python "
            "string message; print the tensor with print() before the raise if needed.")
    if cause is not _NO_CAUSE:  # (`from err`: its class and message, when the program
        exc.__cause__ = None if cause is None else _exception(cause, src)  # raises)
    in_clause = _handled_in_block() if handled else None  # (a clause the program runs)
    handled = sys.exc_info()[1] if handled else None  # (raised in the user's `except`
    if handled is not None and raised_by_user_code(handled) and raised_in_converted_code(
            handled):  # clause: its exception; in a clause the program runs, the one bound
        exc.__context__ = handled  # to its name)
    elif in_clause is not None and in_clause is not exc and not isinstance(
            in_clause, HandledPerRun):  # (`raise`: itself again)
        exc.__context__ = in_clause
    elif cause is not _NO_CAUSE and getattr(cause, "__d2s_handled__", False):
        exc.__context__ = exc.__cause__
    at = f"{short_name(src.filename)}:{src.lineno}" if src is not None else ""
    if isinstance(in_clause, HandledPerRun) and exc.__context__ is None:
        in_clause.raise_(exc, at)
    else:
        raise_again(exc, at)
    mark_raised()


def note_raised_at(exc) -> None:
    """Keep on `exc` the user's line that raises it in a graph block (a `try` body's `raise`:
    `try_except.try_raise`), which a bare `raise` re-raising it names, as eager's traceback
    does (not the line of the `try` or of the clause)."""
    if getattr(exc, "__d2s_raised_at__", None) is None:
        try:
            exc.__d2s_raised_at__ = _origin.capture(2)
        except AttributeError:  # (an exception class with __slots__: the `raise`'s line)
            pass


def raise_again(exc, at: str) -> None:
    """`raise_error(exc)`, at the line that first raised `exc` where it is raised again (a
    bare `raise`, `raise err`, an error no clause caught re-raised after `finally`)."""
    first = getattr(exc, "__d2s_raised_at__", None)
    if first is None:
        raise_error(exc, at=at)
        return
    with _origin.forced.origin(first):
        raise_error(exc, at=f"{short_name(first[0])}:{first[1]}")


class HandledPerRun:
    """What an `except` clause the program runs handles where the run decides which of
    several errors it caught (`KeyError('x')` on one path, `KeyError('y')` on another): a
    `raise` in it has the run's error as its context (a bare `raise`: raises that error),
    one `raise` op per error code, the run's code choosing (`switch_case`)."""

    __slots__ = ("code", "errors")

    def __init__(self, code, errors: dict):
        self.code, self.errors = code, errors  # (the run's error code; code -> exception)

    def raise_(self, exc, at: str) -> None:
        again = any(exc is e for e in self.errors.values())  # (a bare `raise`)

        def raising(err):
            def run():
                if again:
                    raise_again(err, at)
                    return
                exc.__context__ = err
                try:
                    raise_error(exc, at=at)
                finally:
                    exc.__context__ = None
            return run

        rt.static.nn.switch_case(self.code, {k: raising(e) for k, e in self.errors.items()},
                                 default=lambda: None)


def handling(exc) -> None:
    """The graph branch being traced is an `except` clause the program runs, which handles
    `exc` (the one Python object standing for every error it may catch): a `raise` in it has
    `exc` as its context, as in eager code."""
    b = active_builder()
    current().handling[id(b.block)] = (b.block, exc)


def _handled_in_block():
    """The exception the innermost `except` clause the program runs around the point being
    built handles (`handling`), or None."""
    table = current().handling
    b = active_builder()
    if not table or b is None:
        return None
    for block in b.block.ancestors():
        found = table.get(id(block))
        if found is not None and found[0] is block:
            return found[1]
    return None


def _exception(cause, src) -> BaseException:
    """The cause of a `raise ... from cause` under a tensor condition, as Python takes it."""
    if isinstance(cause, type) and issubclass(cause, BaseException):
        cause = cause()
    if not isinstance(cause, BaseException):
        raise TypeError("exception causes must derive from BaseException")
    if any(is_variable(a) for a in cause.args):
        raise TypeError(
            f"raise ... from {type(cause).__name__}(...) under a tensor condition ({where(src)}): "
            "the cause has a tensor argument, but its message is fixed when the program is "
            "built. Use a Python string message.")
    return cause


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
