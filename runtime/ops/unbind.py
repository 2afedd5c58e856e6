"""Small Paddle helpers composed from other ops: `unbind` (a tensor into the slices along an
axis) and `rank` (the number of dims, as a tensor)."""
from __future__ import annotations

from .combine import split
from .creation import full
from .registry import OpError
from .shape import squeeze


def unbind(input, axis: int = 0):
    """The slices of `input` along `axis`, that axis removed (Paddle's `unbind`).

    >>> import runtime as rt
    >>> [t.tolist() for t in rt.unbind(rt.to_tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    nd = len(input.shape)
    if not -nd <= axis < nd:
        raise OpError(f"unbind: axis={axis} is out of range for a tensor of rank {nd}")
    count = input.shape[axis]
    if count == -1:
        raise OpError(f"unbind: dim {axis} must be known when the program is built (it gives "
                      "the number of outputs)")
    return [squeeze(part, axis) for part in split(input, count, axis=axis)]


def rank(input):
    """The number of dims of `input`, as an int32 0-d tensor (Paddle's `rank`).

    >>> import runtime as rt
    >>> int(rt.rank(rt.ones([2, 3])))
    2
    """
    return full([], len(input.shape), "int32")


__all__ = ["rank", "unbind"]
METHODS: dict = {"unbind": unbind}
