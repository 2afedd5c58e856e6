"""`logger.info(...)` and the other logging calls in converted code: an op that logs when the
program runs it.

Eager code logs each time it runs the line, only on the branch taken, with the arguments'
values of that call (`logger.info("loss %.4f", loss.item())`). Called while tracing, the
logging call would run once, on both branches of a tensor `if`, and never again; so converted
code binds a `py_log` op (`runtime.program.debug_ops`): the logger's name, the level, the
message and its arguments (values the program computes among them, formatted by logging when
it runs, a Python number as eager's number), and the user's file, line and function, which
the record shows as eager's would.

    logger.warning("clipping")   ->   _d2s.call(logger.warning)("clipping")
                                      (a py_log op where a program is built)
"""
from __future__ import annotations

import logging

import runtime as rt

from .variables import user_origin

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "warn": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
           "fatal": logging.CRITICAL, "log": None}
_MODULE_FUNCTIONS = {getattr(logging, name): name for name in _LEVELS}


def logging_call(f):
    """The op-binding stand-in for `f` when it is a logging call (a Logger's method, or
    `logging.info` & co. of the root logger) that takes only a message and its arguments
    (`stacklevel=` too); None otherwise."""
    owner = getattr(f, "__self__", None)
    if isinstance(owner, logging.Logger) and getattr(f, "__name__", "") in _LEVELS:
        return _logged(owner, f.__name__, f)
    try:
        name = _MODULE_FUNCTIONS.get(f)
    except TypeError:  # (an unhashable callable)
        return None
    return None if name is None else _logged(logging.getLogger(), name, f)


def _logged(logger: logging.Logger, method: str, f):
    def log(*args, **kwargs):
        if set(kwargs) - {"stacklevel"}:  # (exc_info, extra, stack_info: Python's own call)
            return f(*args, **kwargs)
        level = _LEVELS[method]
        if level is None:
            level, args = args[0], args[1:]
        src = user_origin()  # (the op asks the logger's level when it runs, as eager code)
        rt.static.py_log(logger.name if logger is not logging.getLogger() else "", level,
                         list(args), src.filename if src else "", src.lineno if src else 0,
                         src.function_name if src else "")
        return None
    return log
