"""The text of a value, as converted code makes it: `str()`, `repr()`, `format()`, `%`
formatting and f-strings outside `print`. A tensor computed by the converted code has no
value, so no text, until the program runs: making one is an error at the user's line (the
traced value's own text, `Variable(%t0: i64[])`, would come back instead of eager's, and
nothing would say so). `print` shows such a tensor when the program runs (`print_`), and so
does the message of an `assert` on a tensor when the assert fails (`assert_at_run_time`)."""
from __future__ import annotations

import builtins

import runtime as rt
from runtime.program.debug_ops import assert_text

from ..errors import ConversionError
from . import chosen_text
from .exceptions import helper_raise, in_graph_block, mark_raised, raise_
from .print_values import FString, holds_graph_values, print_objects
from .str_arrays import MadeText
from .variables import user_origin, where


def _refuse(what: str, of: str = "a tensor computed by the converted code"):
    src = user_origin()
    raise ConversionError(
        f"{what} of {of} ({where(src)}): its text exists "
        "only when the program runs. Print it there (`print(x)`, or an f-string inside "
        "`print`), or return the tensor and make its text outside the converted function.",
        origin=src)


def _chosen(x) -> bool:
    """Whether `x` is a str a tensor `if` chose, of known strs (`chosen_text`)."""
    return chosen_text.is_run_str(x) and getattr(x, "texts", None) is not None


def str_(*args, **kwargs):
    """`str(x)`"""
    if len(args) == 1 and not kwargs and _chosen(args[0]):
        if args[0].may_be_none():  # (None on some runs: 'None', eager's text)
            return chosen_text.text_op(builtins.str, "str()", args[0])
        return args[0]  # (a str: itself)
    if args and holds_graph_values(args[0]):
        _refuse("str()")
    return builtins.str(*args, **kwargs)


def repr_(x):
    """`repr(x)`"""
    if _chosen(x):
        return chosen_text.text_op(builtins.repr, "repr()", x)
    if holds_graph_values(x):
        _refuse("repr()")
    return builtins.repr(x)


def format_(x, spec=""):
    """`format(x, spec)`"""
    if _chosen(x):
        return chosen_text.text_op(builtins.format, "format()", x, spec)
    if holds_graph_values(x):
        _refuse("format()")
    return builtins.format(x, spec)


def percent(fmt, args):
    """`"..." % args` with a string literal on the left."""
    if _chosen(args) or type(args) is tuple and any(_chosen(a) for a in args):
        return chosen_text.text_op(lambda f, *a: f % (a[0] if type(args) is not tuple else a),
                                   "`%` formatting", fmt, *(
                                       args if type(args) is tuple else (args,)))
    if holds_graph_values(args):
        _refuse("`%` formatting")
    return fmt % args


_KEEP = [0]  # > 0 while an assert's message is made: its f-string is formatted at run time


def text(value):
    """An f-string outside `print` (`fstring` gives an `FString` where a piece is a tensor)."""
    if isinstance(value, FString) and not _KEEP[0] and not any(
            getattr(p, "str_item", False) for p in value):
        return MadeText(rt.static.py_format(*print_objects(list(value))))
    if isinstance(value, FString) and not _KEEP[0]:
        _refuse("an f-string", "a str only the run decides (one an if whose condition is a "
                "tensor chose, or read from a list a tensor sizes)" if any(
                    getattr(p, "str_item", False) for p in value) else
                "a tensor computed by the converted code")
    return value


def assert_at_run_time(test, message) -> None:
    """`assert test, message()` of a graph `test`: an assert op. An f-string message holding
    tensors is formatted when the op fails, as eager's message (`f"bad: {x.min().item()}"`)."""
    _KEEP[0] += 1
    try:
        text = message() if message is not None else None
    finally:
        _KEEP[0] -= 1
    shown = None if text is None else "".join(
        p if isinstance(p, str) else "..." for p in text) if isinstance(text, FString) else (
        builtins.str(text))
    helper_raise(AssertionError(shown) if text is not None else AssertionError(),
                 user_origin())  # an open `try` would catch it: a clear error
    if isinstance(text, FString):
        assert_text(test, *print_objects(list(text)))
    else:
        rt.static.Assert(test, message=shown)


def raise_made(make, cause=None):
    """`raise E(f"...")` (`make` builds the exception): under a tensor condition an f-string
    message holding values the program computes (`f"too big: {float(x.sum()):.2f}"`) is
    formatted when the program raises it, as an assert's message is; elsewhere `raise_`."""
    if not in_graph_block():
        return raise_(make(), cause)
    _KEEP[0] += 1
    try:
        exc = make()
    finally:
        _KEEP[0] -= 1
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not (isinstance(exc, BaseException) and len(exc.args) == 1 and isinstance(
            exc.args[0], FString)):
        return raise_(exc, cause)
    src = user_origin()
    shown = "".join(p if isinstance(p, str) else "..." for p in exc.args[0])
    helper_raise(type(exc)(shown), src)  # an open `try` would catch it: a clear error
    assert_text(rt.zeros([], "bool"), *print_objects(list(exc.args[0])), error=type(exc))
    mark_raised()
    return None
