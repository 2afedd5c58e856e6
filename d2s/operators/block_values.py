"""What the graph blocks of `if` and loops share (`control_flow.ifelse`, `loops`,
`loop_initial`, `try_calls`): a block's state as a list and back, placeholders for values a
path leaves unbound (zeros that are never read), values standing for Python numbers, a
`LookupError` the user's own code raised while a block was traced (raised again when the
program runs that block), and the refusal of a list with two names that becomes an array.
"""
from __future__ import annotations

import copy
import re

import runtime as rt
from runtime.core import active_builder, is_tensor
from runtime.program.origin import forced

from ..errors import ConversionError
from ..pyct import loader
from . import computed_keys, lists, python_picks
from .aliases import other_references
from .exceptions import raise_
from .lists import StructArray
from .mutation import StateChangeError
from .variables import Undefined, is_return_value, is_variable, where


def as_list(out, n: int) -> list:
    if n == 1:
        return [out]
    return list(out) if n else []


def args_by_name(fn, args: tuple, names: tuple) -> list:
    """The value passed in for each state name of block function `fn`, or `Undefined(name)`
    for a name the block binds first (the converter passes only the names bound before the
    block, in the order of `names`; an attribute's or a closure variable's parameter is
    renamed `_<name>_<k>`: `converters/state.py`)."""
    code = getattr(fn, "__code__", None)
    if code is None or len(args) == len(names):
        return [args[i] if i < len(args) else Undefined(n) for i, n in enumerate(names)]
    params = code.co_varnames[:code.co_argcount]
    out, k = [], 0
    for name in names:
        if k < len(args) and k < len(params) and ("." in name or params[k] == name or
                                                  re.fullmatch(rf"_{re.escape(name)}_\d+",
                                                               params[k])):
            out.append(args[k])
            k += 1
        else:
            out.append(Undefined(name))
    return out


def result_of(state: list):
    if len(state) == 1:
        return state[0]
    return tuple(state) if state else None


class Pending(Undefined):
    """A name the converter proved bound before every read after a loop, though it is bound
    only on some paths inside it (`for ... else` with a `break`: the break path binds it, the
    `else` binds it otherwise). A tensor `if` may fill it with zeros: they are never read."""

    __slots__ = ()


class Guarded(Undefined):
    """A name a `try` body binds first, which nothing after the body reads (not an `except`
    clause, not `finally`, not the code after the `try`): in the body it is read only by
    statements that run where nothing failed (`try_except.try_guard`), so where such a guard
    skips its statements, zeros may stand in for it, never read. Any other `if` sees it as
    `Undefined`."""

    __slots__ = ()


def skipped_in_try(values: list, bound: list) -> list:
    """The values of the branch of a `try` body's guard that skips its statements: zeros
    like the other branch's value (`bound`) stand in for a `Guarded` name there, never read
    (`Pending` where that one is no tensor structure: zeros once `cond` asks for them)."""
    return [v if not isinstance(v, Guarded) else zeros_like(bound[i]) if i < len(bound) and (
        is_tensor(bound[i]) or isinstance(bound[i], (list, tuple, dict)) and has_tensor(
            bound[i])) else Pending(v.name) for i, v in enumerate(values)]


def check_return_none(names, values, src, what: str = "if") -> None:
    """A return value that is None (a path falls through, or `return None`) on one side of a
    graph decision and a value on the other: the result's type would depend on data."""
    for name, vs in zip(names, values):
        if not is_return_value(name):
            continue
        kinds = {"none" if v is None else "undefined" if isinstance(v, Undefined) else "value"
                 for v in vs}
        if "none" in kinds and "value" in kinds:
            raise ConversionError(
                f"the function returns a value on some paths and None on others (a path that "
                f"ends without `return`, or `return None`), and which one is decided by a "
                f"tensor condition ({where(src)}): a converted function's result cannot be "
                f"None for some inputs only. Return a value on every path (e.g. `return x` "
                f"at the end), or decide with a Python value.", origin=src)


def fill_placeholder(value, like):
    """`value`, or zeros like `like` (see `zeros_like`) where `value` is a placeholder."""
    if like is None or not (value is None or isinstance(value, Undefined)):
        return value
    return zeros_like(like)


def same_kind(like, items: list):
    """A list or tuple of `like`'s type holding `items` (a namedtuple takes them as its
    fields)."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def zeros_like(like):
    """Zeros like `like`: a tensor's dtype and shape (unknown dims as 1), a Python number's
    precision (a value standing for a Python number), the same structure for lists / tuples
    / dicts; other Python values as they are."""
    if isinstance(like, (list, tuple)):
        return same_kind(like, [zeros_like(x) for x in like])
    if isinstance(like, dict):
        return {k: zeros_like(x) for k, x in like.items()}
    if isinstance(like, (bool, int, float)) and not is_tensor(like):
        dtype = "bool" if isinstance(like, bool) else "int64" if isinstance(
            like, int) else "float64"  # Python's precision, standing for a Python number
        return mark_python_number(rt.full([], 0, dtype))
    if not is_tensor(like):
        return like
    if is_variable(like) and like.is_array:  # an empty array of the same element type
        out = rt.static.create_array(like.dtype)
        out._static_shape = like._static_shape
        return out
    zeros = rt.zeros([d if d >= 0 else 1 for d in like.shape], like.dtype)
    return mark_python_number(zeros) if getattr(like, "python_scalar", False) else zeros


def mark_python_number(v):
    """Mark a graph value as standing for a Python number (see `Variable.python_scalar`)."""
    if is_variable(v):
        v.python_scalar = True
    return v


def has_tensor(x) -> bool:
    if isinstance(x, (list, tuple)):
        return any(has_tensor(t) for t in x)
    if isinstance(x, dict):
        return any(has_tensor(t) for t in x.values())
    return is_tensor(x) or (isinstance(x, (int, float)) and not isinstance(x, bool))


def copy_container(x):
    """Branches traced one after the other must each start from the same values: lists and
    dicts are copied, and so is a Variable object (`y[0] = v` rebinds the object it is
    called on to a new variable of the branch's block)."""
    return copy.copy(x) if isinstance(x, (list, dict)) or is_variable(x) else x


def stand_in(v):
    """A value for a branch that raises at run time (never read): zeros like a tensor of the
    other branch, the same Python value otherwise."""
    if isinstance(v, StructArray):  # (a list of tuples as arrays: empty ones)
        return v.empty()
    if isinstance(v, (list, tuple)):
        return same_kind(v, [stand_in(x) for x in v])
    if isinstance(v, dict):
        return {k: stand_in(x) for k, x in v.items()}
    return zeros_like(v) if is_variable(v) else v  # (an array: an empty one)


def traceback_frames(e: BaseException) -> list:
    tb, out = e.__traceback__, []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def raised_by_user_code(e: BaseException) -> bool:
    """Whether `e` was raised by the user's own code (its innermost frame is converted code,
    or d2s's list operators that stand for `lst.pop()`, `lst[i] = v` & co. there), not by d2s."""
    frames = traceback_frames(e)
    if not frames:
        return False
    code = frames[-1].tb_frame.f_code
    return loader.is_generated(code.co_filename) or code.co_filename == lists.__file__ or (
        code is computed_keys.set_item.__code__) or (  # (`lst[i] = v` of converted code)
            code is python_picks.getitem_.__code__)  # (`d[k]`, `lst[i]`)


def raise_when_run(e: BaseException) -> None:
    """A `raise` op of `e` (its type and message, at the user's line) in the branch being
    traced."""

    tb = next(tb for tb in reversed(traceback_frames(e))  # the innermost line of the user's code
              if loader.is_generated(tb.tb_frame.f_code.co_filename))
    src = loader.lookup(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
    with forced(tb.tb_frame, tb.tb_lineno):  # the op reports that line
        raise_(type(e)(*e.args), src=src, handled=False)


def refuse_aliased(lst: list, name: str, why: str, src, log) -> None:
    """A list about to become a tensor array (its name is rebound to the array) must have no
    other reference: that one would keep the old list and miss the appends."""
    others = other_references(lst, name, (log,))
    if others:
        raise StateChangeError(
            f"the list '{name}' {why} ({where(src)}), but it is also reachable as "
            f"{', '.join(others[:3])}, which would keep the old list. Use one name for the "
            "list while it grows (or rt.concat a tensor instead of a list).", src)


def probe(fn, *args):
    """`fn(*args)` evaluated in a scratch block that is then discarded: a Python result is
    the real value; a graph result only says "this is a graph value" (its ops are gone, so a
    loop test that turns out to be a tensor leaves no dead ops behind)."""
    b = active_builder()
    if b is None:
        return fn(*args)
    with b.scratch():
        value = fn(*args)
    return value
