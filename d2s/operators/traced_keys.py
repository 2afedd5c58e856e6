"""Python containers holding values the converted code computed (`int(t)`, a tuple of them).

Such a value is a graph value while tracing, which hashes and compares by identity: a set of
`(int(a[i]), int(a[i + 1]))` pairs or a dict keyed by `int(t)` would find nothing
(`pair in seen` silently False). Membership (`in_`) compares by value instead, as a graph op
(`equal_items`); a returned dict whose keys are such values cannot be rebuilt by the program
(its keys are fixed) and is refused at the function's line (`refuse_traced_keys`).
"""
from __future__ import annotations

import runtime as rt

from ..errors import ConversionError
from .branch_sets import set_flags
from .key_flags import refuse_returned
from .trace_state import current
from .variables import is_variable, user_origin, where


def traced(v) -> bool:
    """A graph value, or a tuple holding one."""
    return is_variable(v) or type(v) is tuple and any(traced(x) for x in v)


def equal_items(a, b):
    """`a == b` as Python compares container items: True, False or a bool graph value
    (tuples item by item, graph values by all their elements)."""
    if type(a) is tuple or type(b) is tuple:
        if type(a) is not tuple or type(b) is not tuple or len(a) != len(b):
            return False
        result = True
        for x, y in zip(a, b):
            same = equal_items(x, y)
            if same is False:
                return False
            if same is not True:
                result = same if result is True else rt.logical_and(result, same)
        return result
    if not (is_variable(a) or is_variable(b)):
        return a is b or bool(a == b)
    return rt.all(rt.equal(a, b))


def refuse_traced_keys(out, fn) -> None:
    """A dict in the result `out` keyed by a value the converted code computed: the program
    returns the same keys every call, so the trace's value would be the key (refused)."""
    stack, seen = [out], set()
    while stack and len(seen) < 2000:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, dict):
            refuse_returned(v, fn)  # (a key a tensor `if` set on one path: `branch_keys`)
            if any(traced(k) for k in v):
                code = getattr(fn, "__code__", None)
                at = f' (File "{code.co_filename}", line {code.co_firstlineno})' if code else ""
                raise ConversionError(
                    f"{getattr(fn, '__qualname__', fn)}{at} returns a dict keyed by a value "
                    "computed by the converted code (`{int(t): v}`): a value computed by the "
                    "converted code used as a dict key is known only when the program runs, "
                    "and a program returns the same keys on every call. Return the keys and "
                    "values as tensors (e.g. two lists) instead.")
            stack.extend(v.values())
        elif type(v) in (list, tuple):
            stack.extend(v)


def kind_name(x) -> str:
    """The name of `x`'s type as eager code has it (a set converted code made: `set`)."""
    return "set" if isinstance(x, set) else "frozenset" if isinstance(x, frozenset) else \
        type(x).__name__


_KEEP_IN_TENSOR = ("keep such values in a tensor (rt.unique, or compare with `in`, which "
                   "converted code evaluates by value)")


def check_decided(container, what: str) -> None:
    """`what` (`in`, `len()`, a loop) reads a set that the branches of a tensor `if` left
    holding other items (`mutation.finish`): which ones it holds only the run decides, and a
    set holds Python values (a ConversionError at the user's line)."""
    entry = current().undecided.get(id(container))
    if entry is None or entry[0] is not container:
        return
    _, path, if_src = entry
    src = user_origin(3)
    at = f" ({where(src)})" if src is not None else ""  # (returned: the function's end)
    if set_flags(container):
        raise ConversionError(
            f"{what}{at} reads the set {path}, whose items the branches of an if "
            f"whose condition is a tensor ({where(if_src)}) decide: which items it holds is "
            "known only when the program runs, and a set holds Python values. `len()` of it "
            "and `item in` it follow the run; for anything else keep what it tracks in a "
            "tensor (a bool mask, rt.unique), or change it alike in both branches.", src)
    raise ConversionError(
        f"{what} ({where(src)}) reads the set {path}, which the branches of an if whose "
        f"condition is a tensor ({where(if_src)}) leave holding other items: which items it "
        "holds is decided when the program runs, and a set holds Python values. Change it "
        "alike in both branches, keep what it tracks in a tensor (a bool mask, rt.unique), or "
        "decide the if with a Python value (code after a `return` inside such an if is its "
        "else branch).", src)


def check_unique(container, what: str, instead: str = _KEEP_IN_TENSOR) -> None:
    """`len` of, or a loop over, a set or dict whose elements or keys the converted code
    computed: equal values are distinct objects while tracing, so the count (and the items)
    would be the trace's, not Python's (a ConversionError at the user's line, with what to
    write `instead`; set algebra: `set_algebra`)."""
    check_decided(container, what)
    if not isinstance(container, (set, frozenset, dict)) or not any(
            traced(k) for k in container):
        return
    src = user_origin(3)
    kind = "dict key" if isinstance(container, dict) else "set element"
    raise ConversionError(
        f"{what} ({where(src)}) of a {kind_name(container)} holding a value computed by "
        f"the converted code used as a {kind}: its value is known only when the program runs, "
        f"so equal values would count as different {kind}s. {instead[0].upper()}"
        f"{instead[1:]}.", src)
