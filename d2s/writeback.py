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


def _places(sf, args, kwargs) -> list:
    names = list(sf.input_names(len(args))) + list(kwargs)
    values = list(args) + list(kwargs.values())
    names += [f"argument {i + 1}" for i in range(len(names), len(values))]
    return mutation.Log([sf.dygraph_function], values, names, None,
                        track_variables=False).places()


def before(sf, args, kwargs) -> dict:
    """The Python numbers and eager Tensors reachable before tracing, by place: the program
    reads them as constants (numbers) or by reference (Tensors)."""
    import runtime as rt
    out = {}
    for s in _places(sf, args, kwargs):
        v = s.get()
        if isinstance(v, rt.Tensor) or isinstance(v, (int, float)) and not isinstance(v, bool):
            out[s.ident()] = v
    return out


def capture(sf, args, kwargs, out, before: dict):
    """`out`, or `WithState(out, places, values)` when reachable places hold graph values.
    A place that held an eager Tensor before the call keeps that Tensor, which the program
    updates in place (so the next call reads the new value); one that held a Python number
    cannot change (the program read the number as a constant) and raises."""
    import runtime as rt
    slots = []
    for s in _places(sf, args, kwargs):
        v = s.get()
        if not _holds_variable(v):
            continue
        _check(s.path, v)
        old = before.get(s.ident())
        if isinstance(old, rt.Tensor) and is_variable(v):
            if tuple(old.shape) != tuple(v.shape) or old.dtype != v.dtype:
                raise mutation.StateChangeError(
                    f"{s.path} is a tensor of shape {list(old.shape)} ({old.dtype.name}) "
                    f"before the call and the call sets it to one of shape {list(v.shape)} "
                    f"({v.dtype.name}); a tensor kept on an object must keep its shape and "
                    "dtype in converted code")
            old.set_value(v)  # a program op writing the Tensor the program reads
            s.set(old)
            continue
        if old is not None and not isinstance(old, rt.Tensor):
            raise mutation.StateChangeError(
                f"{s.path} is the Python number {old!r} before the call and the call sets it "
                f"to a tensor (in {sf.__qualname__}); the converted program reads the number "
                f"as a constant, so later calls would start from {old!r} again. Make it a "
                f"tensor before the first call (for example rt.to_tensor({old!r}))")
        slots.append(s)
    if not slots:
        return out
    return WithState((out, Places(slots), [s.get() for s in slots]))


def apply(result):
    """After a call: store the computed values in their places; returns the user's result."""
    if type(result) is not WithState:
        return result
    out, places, values = result
    for s, v in zip(places.slots, values):
        s.set(v)
    return out
