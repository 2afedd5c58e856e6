"""Paddle's accumulation helpers, composed from other ops: `increment` (in place, as Paddle's
counters in loops use it) and `add_n` (the sum of a list of tensors)."""
from __future__ import annotations

from .arrays import array_stack
from .creation import is_tensor
from .inplace import write_into
from .math import add, assign, cast
from .reduce import sum as sum_


def increment(x, value: float = 1.0, name=None):
    """`x += value` in place for a one-element tensor `x`; returns `x` (Paddle's increment).
    The dtype of `x` is kept (an int64 counter stays int64).

    >>> import runtime as rt
    >>> i = rt.zeros([1], "int64")
    >>> _ = rt.increment(i)
    >>> i.tolist()
    [1]
    """
    if not is_tensor(x):
        raise TypeError(f"increment: x must be a Tensor, got {type(x).__name__}")
    known = [d for d in x.shape if d != -1]
    if len(known) == len(x.shape) and _prod(known) != 1:
        raise ValueError(f"increment: x must have exactly one element, got shape {list(x.shape)}")
    step = float(value) if x.dtype.is_floating else int(value)
    write_into(x, cast(add(x, step), x.dtype))
    return x


def _prod(dims):
    out = 1
    for d in dims:
        out *= d
    return out


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one shape (a single tensor is copied).

    >>> import runtime as rt
    >>> rt.add_n([rt.ones([2]), rt.ones([2]), rt.ones([2])]).tolist()
    [3.0, 3.0]
    """
    if is_tensor(inputs) and getattr(inputs, "kind", None) == "array":
        return sum_(array_stack(inputs), axis=0)  # a list whose length is decided at run time
    if is_tensor(inputs):
        return assign(inputs)
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n: inputs is an empty list")
    shapes = {tuple(t.shape) for t in inputs}
    if len(shapes) > 1 and not any(-1 in s for s in shapes):
        raise ValueError(f"add_n: all inputs must have one shape, got {[list(s) for s in shapes]}")
    total = inputs[0]
    for t in inputs[1:]:
        total = add(total, t)
    return assign(total) if len(inputs) == 1 else total


__all__ = ["add_n", "increment"]
METHODS: dict = {}
