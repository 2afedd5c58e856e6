"""Paddle's functions that work along one axis, composed of slicing, gathering and scattering
(so gradients and static programs come from those ops): `diff` (differences of neighbours),
`repeat_interleave` (each slice repeated), `index_add` (slices added at indices) and
`index_fill` (slices set there).
One op of its own: the gather index of `repeat_interleave` with per-slice counts, whose
length is known only when the program runs."""
from __future__ import annotations

from .. import dtypes
from . import infer as I
from .combine import concat
from .creation import is_tensor
from .gather import gather
from .index import slice as slice_
from .logic import where
from .math import cast
from .reduce import sum as sum_
from .registry import Meta, OpError, OpTypeError, bind, register
from .scatter_update import scatter_nd_add
from .shape import flatten, moveaxis, reshape, unsqueeze
from .tiling import tile

_END = 2 ** 62  # a slice end past any dim


def diff(x, n: int = 1, axis: int = -1, prepend=None, append=None, name=None):
    """The `n`-th differences of neighbours along `axis` (`x[1:] - x[:-1]`, n times), after
    joining `prepend` before and `append` after x along that axis; bool tensors give `!=`.

    >>> import runtime as rt
    >>> rt.diff(rt.to_tensor([1.0, 4.0, 9.0, 16.0])).tolist()
    [3.0, 5.0, 7.0]
    """
    if not isinstance(n, int) or n < 0:
        raise OpError(f"diff: n must be a non-negative int, got {n!r}")
    axis = I.norm_axis("diff", int(axis), len(x.shape), "axis")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat(parts, axis)
    for _ in range(n):
        later = slice_(x, [axis], [1], [_END])
        earlier = slice_(x, [axis], [0], [-1])
        x = later != earlier if x.dtype == "bool" else later - earlier
    return x


def _index_infer(repeats):
    I.check_tensor("repeat_interleave", "repeats", repeats)
    if len(repeats.shape) != 1 or not repeats.dtype.is_integer:
        raise OpTypeError(f"repeat_interleave: repeats must be a 1-D int tensor, got "
                          f"{repeats.dtype.name}{I.fmt(repeats.shape)}")
    return Meta((-1,), dtypes.int64)


def _index_kernel(xp, repeats):
    if (repeats < 0).any():
        raise ValueError("negative repeats")
    return xp.repeat(xp.arange(repeats.shape[0], dtype="int64"), repeats)


REPEAT_INDEX = register(
    "repeat_interleave_index", kernel=_index_kernel, infer=_index_infer, nondiff=True,
    amp="keep", doc="arange(len(repeats)) with entry i repeated repeats[i] times (the gather "
                    "index of repeat_interleave; its length is known at run time).")


def repeat_interleave(x, repeats, axis: int | None = None, name=None):
    """Each slice of `x` along `axis` repeated `repeats` times in place (None: of the
    flattened x); `repeats` is an int, or a 1-D int tensor with one count per slice.

    >>> import runtime as rt
    >>> rt.repeat_interleave(rt.to_tensor([[1, 2], [3, 4]]), 2, axis=1).tolist()
    [[1, 1, 2, 2], [3, 3, 4, 4]]
    """
    if axis is None:
        x, axis = flatten(x), 0
    nd = len(x.shape)
    axis = I.norm_axis("repeat_interleave", int(axis), nd, "axis")
    if is_tensor(repeats):
        if len(repeats.shape) == 0:
            repeats = reshape(repeats, [1])
        if repeats.shape[0] == 1 and x.shape[axis] != 1:  # one count for every slice
            others = [i for i in range(nd) if i != axis]
            count = sum_(cast(x, "int64") * 0, others) if others else cast(x, "int64") * 0
            repeats = count + cast(repeats, "int64")
        return gather(x, bind(REPEAT_INDEX, (repeats,), {}), axis)
    if not isinstance(repeats, int) or repeats < 0:
        raise OpError(f"repeat_interleave: repeats must be a non-negative int or an int "
                      f"tensor, got {repeats!r}")
    last = unsqueeze(moveaxis(x, axis, -1), -1)  # [..., d, 1] -> [..., d, repeats]
    tiled = tile(last, [1] * nd + [repeats])
    return moveaxis(reshape(tiled, [0] * (nd - 1) + [-1]), -1, axis)


def index_add(x, index, axis: int, value, name=None):
    """A copy of `x` with the slices of `value` along `axis` added at positions `index`
    (a 1-D int tensor; repeated positions accumulate). `value` has x's shape with
    len(index) along `axis`.

    >>> import runtime as rt
    >>> rt.index_add(rt.zeros([3, 2]), rt.to_tensor([0, 2, 0]), 0, rt.ones([3, 2])).tolist()
    [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    """
    axis = I.norm_axis("index_add", int(axis), len(x.shape), "axis")
    if len(index.shape) != 1:
        raise OpError(f"index_add: index must be 1-D, got shape {I.fmt(index.shape)}")
    if len(value.shape) != len(x.shape):
        raise OpError(f"index_add: value has shape {I.fmt(value.shape)}; it must have x's "
                      f"rank ({len(x.shape)}, x of shape {I.fmt(x.shape)})")
    if value.dtype != x.dtype:
        value = cast(value, x.dtype)
    out = scatter_nd_add(moveaxis(x, axis, 0), unsqueeze(index, -1), moveaxis(value, axis, 0))
    return moveaxis(out, 0, axis)


def index_fill(x, index, axis: int, value, name=None):
    """A copy of `x` with the slices at positions `index` (a 1-D int tensor) along `axis`
    set to `value` (a number or a one-element tensor, which gets their gradient).

    >>> import runtime as rt
    >>> rt.index_fill(rt.ones([2, 3]), rt.to_tensor([0, 2]), 1, -1.0).tolist()
    [[-1.0, 1.0, -1.0], [-1.0, 1.0, -1.0]]
    """
    nd = len(x.shape)
    axis = I.norm_axis("index_fill", int(axis), nd, "axis")
    if len(index.shape) != 1:
        raise OpError(f"index_fill: index must be 1-D, got shape {I.fmt(index.shape)}")
    others = [i for i in range(nd) if i != axis]
    slots = cast(x, "float32") * 0.0  # one counter per slice along axis, known at run time
    slots = sum_(slots, others) if others else slots
    hit = index_add(slots, index, 0, cast(index, "float32") * 0.0 + 1.0) > 0
    hit = reshape(hit, [-1 if i == axis else 1 for i in range(nd)])
    fill = cast(value, x.dtype) if is_tensor(value) else value
    return where(hit, fill, x)


METHODS = {"diff": diff, "repeat_interleave": repeat_interleave, "index_add": index_add,
           "index_fill": index_fill}

__all__ = ["diff", "index_add", "index_fill", "repeat_interleave"]
