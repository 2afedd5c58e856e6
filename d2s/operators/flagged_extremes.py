"""`max(d, key=d.get)` / `min(d, key=d.get)` (also `key=d.__getitem__`, and of `d.keys()`)
of a dict whose keys a tensor `if` set on some paths only (`key_flags`, issue 35): eager code
visits the keys present on this run, so the program scans every key in the dict's order as
Python's `max` does (an item replaces the best so far where its key is strictly greater: the
first of equal ones stays, NaN as Python compares it), each key only where its presence
flag holds, and picks the key at the run's position (`sort_values._column`: a str the run
picks, or a number). No key present on a run: eager's `ValueError` when the program runs, at
the user's line. Other key functions, and `default=`, keep the refusal
(`key_flags.refuse_iteration`)."""
from __future__ import annotations

import builtins

import runtime as rt
from runtime.program.debug_ops import raise_error

from .control_flow import ifelse
from .exceptions import short_name
from .key_flags import check_order, flags_of
from .sort_values import _column, _key_values
from .variables import user_origin, where

_KEYS = type({}.keys())


def flagged_extreme(py, args: tuple, kwargs: dict):
    """`py(*args, **kwargs)` (`max` or `min`) of such a dict by its own values; None where
    the call is not one."""
    x = args[0] if builtins.len(args) == 1 else None
    mapping = x if type(x) is dict else x.mapping if type(x) is _KEYS else None
    flags = flags_of(mapping) if mapping is not None else {}
    key = kwargs.get("key")
    if not flags or builtins.set(kwargs) != {"key"} or not _own_values(
            getattr(key, "__self__", None), mapping) or getattr(key, "__name__", "") not in (
            "get", "__getitem__"):
        return None
    what = f"{py.__name__}()"
    check_order(mapping, what)
    src = user_origin(3)
    keys = builtins.list(mapping)
    values = [_value(mapping[k], flags.get(k), src) for k in keys]
    have, best, at = None, rt.full([], 0.0, "float64"), rt.full([], 0, "int64")
    for i, k in builtins.enumerate(keys):
        v = values[i]
        better = v > best if py is builtins.max else v < best
        take = better if have is None else rt.logical_or(rt.logical_not(have), better)
        if have is None:
            take = rt.full([], True, "bool")
        flag = flags.get(k)
        if flag is not None:
            take = rt.logical_and(flag, take)
        best = rt.where(take, v, best)
        at = rt.where(take, rt.full([], i, "int64"), at)
        have = take if have is None else rt.logical_or(have, take)
    _raise_when_empty(have, py, src)
    return _column(keys, src)(at)


def _own_values(d, mapping) -> bool:
    """Whether `d` is the dict `mapping` is (or a keys view's read-only proxy of it shows):
    the same keys holding the same objects."""
    return type(d) is dict and (d is mapping or builtins.len(d) == builtins.len(mapping) and
                                builtins.all(k in d and dict.__getitem__(d, k) is v
                                             for k, v in mapping.items()))


def _value(value, flag, src):
    """The sort key of one item as a 0-d float64 value, read under its key's presence flag
    (the value's read check raises eager's KeyError where it is read on a run without it)."""
    if flag is None:
        return _key_values([value], src)[0]

    def present(v):
        return (_key_values([value], src)[0],)

    def absent(v):
        return (v,)
    (out,) = ifelse(flag, present, absent, (rt.full([], 0.0, "float64"),), ("value",))
    return out


def _raise_when_empty(have, py, src) -> None:
    """Eager's `ValueError` (this Python's message) where no key is present on the run."""
    try:
        py([])
    except ValueError as e:
        message = str(e)
    exc = ValueError(f"{message} ({where(src)}: no key of the dict is present on this "
                     "input)")

    def fail():
        raise_error(exc, at=f"{short_name(src.filename)}:{src.lineno}" if src else "")
        return rt.zeros([], "bool")

    rt.static.nn.cond(rt.logical_not(have), fail, lambda: rt.zeros([], "bool"))
