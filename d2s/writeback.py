"""Write-back: after a converted call nothing the user can reach holds a static `Variable`.

Tracing runs the user's Python code with graph values, so an attribute set on `self` or on an
object passed in (`self.cache = h`, `o.t = x`), a closure cell (`nonlocal acc`), a module
global or a container the function can reach (`log.append(v)`) may be left holding a
`Variable` of the program being built. Eager code would leave a Tensor there.

`capture(sf, args, kwargs, out)` runs right after tracing: it walks what the call can reach
(the function's closure cells and the globals its code names, the bound instance — a Layer
and its sub-layers — and the arguments) and finds every place holding a graph value. Those
values become extra outputs of the program; `apply(result)` runs after each call of the
compiled program and stores the computed Tensors in the same places, so the user's objects
hold what eager code would have left there. A value that cannot be an output (a tensor array,
a value that exists only inside a `cond`/`while` block) raises `StateChangeError` naming the
place.
"""
from __future__ import annotations

from .operators import mutation
from .operators.variables import is_variable


class WithState(tuple):
    """`(out, places, values)`: the function's own result plus the places to write back (a
    Python leaf, kept as a constant by the program cache) and their values (program
    outputs)."""


class Places:
    """The slots to write back (not a list, so the program cache keeps it as one leaf)."""

    __slots__ = ("slots",)

    def __init__(self, slots):
        self.slots = slots


def _holds_variable(v, depth=0) -> bool:
    if is_variable(v):
        return True
    if depth < 6 and type(v) in (list, tuple):
        return any(_holds_variable(x, depth + 1) for x in v)
    if depth < 6 and type(v) is dict:
        return any(_holds_variable(x, depth + 1) for x in v.values())
    return False


def _check(path, v, depth=0):
    if is_variable(v):
        if v.is_array:
            raise mutation.StateChangeError(
                f"{path} holds a list that became a tensor array inside a loop whose "
                "condition is a tensor, and it outlives the call; return it (or "
                "rt.stack(...) of it) from the function instead of keeping it there")
        blk = getattr(v, "block", None)
        if blk is not None and getattr(blk, "idx", 0) != 0:
            raise mutation.StateChangeError(
                f"{path} was set to a tensor inside an if or loop whose condition is a tensor "
                "in a way d2s could not follow; assign it outside the block, or return the "
                "value from the function")
    elif depth < 6 and type(v) in (list, tuple):
        for i, x in enumerate(v):
            _check(f"{path}[{i}]", x, depth + 1)
    elif depth < 6 and type(v) is dict:
        for k, x in v.items():
            _check(f"{path}[{k!r}]", x, depth + 1)


def capture(sf, args, kwargs, out):
    """`out`, or `WithState(out, places, values)` when reachable places hold graph values."""
    roots = [sf.dygraph_function] + [a for a in args if not is_variable(a)] + [
        v for v in kwargs.values() if not is_variable(v)]
    log = mutation.Log(roots, (), (), None, track_variables=False)
    slots = [s for s in log.places() if _holds_variable(s.get())]
    if not slots:
        return out
    for s in slots:
        _check(s.path, s.get())
    return WithState((out, Places(slots), [s.get() for s in slots]))


def apply(result):
    """After a call: store the computed values in their places; returns the user's result."""
    if type(result) is not WithState:
        return result
    out, places, values = result
    for s, v in zip(places.slots, values):
        s.set(v)
    return out
