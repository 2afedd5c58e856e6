"""Paddle's names that move elements, composed of `flip`, `transpose`, `reshape` and `gather`
(so gradients and static programs come from those ops): `rot90`, `unflatten`, `take`."""
from __future__ import annotations

from . import infer as I
from .gather import gather
from .math import remainder
from .registry import OpError
from .shape import flip, reshape, transpose


def rot90(x, k: int = 1, axes=(0, 1), name=None):
    """`x` rotated by 90 degrees `k` times in the plane of `axes`, from the first axis
    towards the second (as `np.rot90`).

    >>> import runtime as rt
    >>> rt.rot90(rt.to_tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    nd = len(x.shape)
    axes = [I.norm_axis("rot90", int(a), nd, "axes") for a in axes]
    if len(axes) != 2 or axes[0] == axes[1]:
        raise OpError(f"rot90: axes must be two different axes, got {list(axes)}")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, axes)
    perm = list(range(nd))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(x, [axes[1]]), perm)
    return flip(transpose(x, perm), [axes[1]])


def unflatten(x, axis: int, shape, name=None):
    """`x` with dim `axis` split into `shape` (one entry may be -1).

    >>> import runtime as rt
    >>> rt.unflatten(rt.ones([2, 6, 3]), 1, [2, 3]).shape
    [2, 2, 3, 3]
    """
    nd = len(x.shape)
    axis = I.norm_axis("unflatten", int(axis), nd, "axis")
    shape = [int(d) for d in shape]
    if not shape:
        raise OpError("unflatten: shape must name at least one dim")
    target = [0] * axis + shape + [-1 if d == -1 else d for d in x.shape[axis + 1:]]
    if -1 in shape and -1 in x.shape[axis + 1:]:
        raise OpError(f"unflatten: shape {shape} has -1 and x (shape {I.fmt(x.shape)}) has "
                      "an unknown dim after the axis; give every dim of shape")
    return reshape(x, target)


def take(x, index, mode: str = "raise", name=None):
    """The elements of the flattened `x` at `index` (an int tensor; the result has its
    shape). mode 'raise' refuses an index out of range, 'wrap' takes it modulo the size,
    'clip' clamps it; negative indices count from the end in 'raise' mode.

    >>> import runtime as rt
    >>> rt.take(rt.to_tensor([[1, 2], [3, 4]]), rt.to_tensor([[0, 3]])).tolist()
    [[1, 4]]
    """
    if mode not in ("raise", "wrap", "clip"):
        raise OpError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    flat = reshape(x, [-1])
    size = flat.shape[0]
    if mode == "wrap":
        index = remainder(index, size)
    elif mode == "clip":
        index = index.clip(0, size - 1)
    return reshape(gather(flat, reshape(index, [-1])), list(index.shape) or [])


METHODS = {"rot90": rot90, "unflatten": unflatten, "take": take}

__all__ = ["rot90", "take", "unflatten"]
