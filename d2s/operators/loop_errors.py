"""The runtime's errors about a graph loop's variables, told with the user's names: the
`while` op numbers its variables (the leaves of the carried state, then of the objects the
body changes), which mean nothing at the user's line."""
from __future__ import annotations

import re
import sys

from runtime import pytree
from runtime.program.origin import frame_line

from ..errors import ConversionError
from ..pyct import loader
from .variables import is_return_value, where

_KEPT = re.compile(r"while_loop: loop variable (\d+) is (.+?) before the loop but the body "
                   r"returns (?:Variable )?(.+?); a loop variable must keep its dtype and rank")


def named(error: Exception, values: list, labels: list, src) -> Exception | None:
    """`error` told with the name of the loop variable it is about (`values`: the loop's
    variables as passed to the `while` op; `labels`: the user's name of each); None where
    it is not about one variable."""
    if isinstance(error, ValueError) and str(error).startswith(_STRUCTURE):
        return _structure_changed(values, labels, src)
    m = _KEPT.match(str(error)) if isinstance(error, TypeError) else None
    if m is None:
        return None
    leaf, before, after = int(m.group(1)), m.group(2), m.group(3)
    for value, name in zip(values, labels):
        n = len(pytree.flatten(value)[0])
        if leaf < n and is_return_value(name):  # (d2s's name for what `return` gives)
            return ConversionError(
                f"the returned value{_leaf_path(value, leaf)} is {before} before a loop whose "
                f"condition is a tensor ({where(src)}) and {after} after its body: the value "
                "the loop carries for a `return` keeps one dtype and rank, and here the "
                "function returns another on a path before the loop than in it. Return one "
                "dtype on every path (`rt.cast(v, ...)`; for a sum of Python numbers, "
                "`sum(items, 0.0)`).", src)
        if leaf < n:
            label = name + _leaf_path(value, leaf)
            return TypeError(
                f"{label!r} is {before} before a loop whose condition is a tensor "
                f"({where(src)}) and {after} after its body: a value the loop carries keeps "
                f"its dtype and rank. Give {label!r} that dtype and rank before the loop (for "
                f"a Python number that becomes a tensor: `{label} = rt.zeros(...)` of the "
                "body's shape and dtype).")
        leaf -= n
    return None


_STRUCTURE = "while_loop: body must return the loop variables in the same structure"


def _structure_changed(values: list, labels: list, src) -> Exception:
    """The body gave a loop variable another structure (a tuple grown by `+`)."""
    tuples = [(name, v) for v, name in zip(values, labels) if type(v) is tuple and v]
    what = (f"{tuples[0][0]!r} is a tuple of length {len(tuples[0][1])} before a loop whose "
            f"condition is a tensor ({where(src)}), and the body gives it another length or "
            "kind of items" if tuples else "a value that a loop whose condition is a tensor "
            f"({where(src)}) carries gets another structure in the body (a tuple of another "
            "length, a container of other kinds of items)")
    return ConversionError(
        f"{what}: a loop carries values of one structure. A tuple the body grows must start "
        "empty (`()`) or hold tensors of one dtype and rank; keep other items in a list "
        "(`out = [...]`, `out.append(v)`), which becomes a tensor array.", origin=src)


def _leaf_path(value, leaf: int) -> str:
    """Where leaf number `leaf` of `value` is inside it: `['mem']`, `[0]`, `.h` ('' for a
    leaf itself)."""
    if not pytree.is_container(value):
        return ""
    items, (kind, _, keys) = pytree.children(value)
    for k, item in enumerate(items):
        n = len(pytree.flatten(item)[0])
        if leaf < n:
            where_in = (f"[{keys[k]!r}]" if kind is dict else f".{keys[k]}" if
                        kind == "dataclass" else f"[{k}]")
            return where_in + _leaf_path(item, leaf)
        leaf -= n
    return ""


def refuse_varying_stop_read(value, depth: int = 2) -> None:
    """Converted code read the stop_gradient of a value a graph loop carries that does not
    require a gradient when the loop starts and does from its second trip on
    (`Variable.stop_varies`): eager code decides a Python test of it per trip, one program
    once for every trip (a ConversionError at the user's line; reads by d2s itself pass)."""
    f = sys._getframe(depth)  # (the code that read the property)
    src = loader.lookup(f.f_code.co_filename, frame_line(f))
    if src is None:
        return
    raise ConversionError(
        f"reading stop_gradient ({where(src)}) of a value that a loop whose condition is a "
        "tensor carries: it does not require a gradient when the loop starts and does from "
        "the second trip on, so a Python decision on it would differ between trips, which "
        "one program cannot express. Decide before the loop (read the flag of the value the "
        "loop starts from), or give the loop a value that requires a gradient from the "
        "start.", src)
