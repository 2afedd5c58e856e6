"""`rt.tile`: the `tile` op, and with repeat counts known only when the program runs (int
tensors in `repeat_times`, e.g. read from `rt.shape(y)` in converted code) a composition of
unsqueeze + expand + reshape so that it differentiates like `tile` itself."""
from __future__ import annotations

from . import infer as I
from .combine import stack
from .creation import full, is_tensor
from .math import cast, multiply
from .registry import STATE, Meta, OpError, bind, register
from .shape import expand, reshape, shape, unsqueeze


def _tile_infer(x, repeat_times):
    I.check_tensor("tile", "x", x)
    if any(not isinstance(r, int) or r < 0 for r in repeat_times):
        raise OpError(f"tile: repeat_times {list(repeat_times)} must be non-negative ints")
    n = max(len(x.shape), len(repeat_times))
    xs = (1,) * (n - len(x.shape)) + tuple(x.shape)
    reps = (1,) * (n - len(repeat_times)) + tuple(repeat_times)
    return Meta(tuple(-1 if d == -1 else d * r for d, r in zip(xs, reps)), x.dtype)


def _tile_grad_kernel(xp, g, x, repeat_times):
    n = max(x.ndim, len(repeat_times))
    xs = (1,) * (n - x.ndim) + x.shape
    reps = (1,) * (n - len(repeat_times)) + tuple(repeat_times)
    interleaved = [v for pair in zip(reps, xs) for v in pair]
    return g.reshape(interleaved).sum(axis=tuple(range(0, 2 * n, 2))).reshape(x.shape)


TILE = register(
    "tile", kernel=lambda xp, x, repeat_times: xp.tile(x, repeat_times), infer=_tile_infer,
    grad=lambda ins, outs, gs, a: [_tile_grad(gs[0], ins[0], a["repeat_times"])], amp="keep")
TILE_GRAD = register(
    "tile_grad", kernel=_tile_grad_kernel, infer=lambda g, x, repeat_times: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [tile(gs[0], a["repeat_times"]), None], amp="keep",
    doc="Sum the tiles of g back onto x's shape (the grad of tile).")


def tile(x, repeat_times, name=None):
    """Repeat x `repeat_times[i]` times along each axis (NumPy's tile).

    >>> import runtime as rt
    >>> rt.tile(rt.ones([2, 3]), [2, 1]).shape
    [4, 3]
    """
    if _has_runtime_value(repeat_times):
        return tile_dynamic(x, repeat_times)
    reps = (repeat_times,) if isinstance(repeat_times, int) else tuple(
        int(r) for r in repeat_times)
    return bind(TILE, (x,), {"repeat_times": reps})


def _has_runtime_value(repeat_times) -> bool:
    """True while building a program when a repeat count is a tensor (known at run time)."""
    if STATE.builder is None or isinstance(repeat_times, int):
        return False
    parts = [repeat_times] if hasattr(repeat_times, "dtype") else list(repeat_times)
    return any(hasattr(r, "dtype") for r in parts)


def _tile_grad(g, x, repeat_times):
    return bind(TILE_GRAD, (g, x), {"repeat_times": tuple(repeat_times)})


def tile_dynamic(x, repeat_times):
    """`tile(x, repeat_times)` where entries of `repeat_times` may be int tensors."""
    if is_tensor(repeat_times):
        reps = [repeat_times[i] for i in range(repeat_times.shape[0])]
    else:
        reps = list(repeat_times)
    n = max(len(x.shape), len(reps))
    reps = [1] * (n - len(reps)) + reps
    reps = [cast(reshape(r, []), "int64") if is_tensor(r) else full([], int(r), "int64")
            for r in reps]
    x = reshape(x, [1] * (n - len(x.shape)) + [0] * len(x.shape)) if len(x.shape) < n else x
    dims = shape(x)
    y = x
    for i in range(n):  # [d0, d1] -> [1, d0, 1, d1]
        y = unsqueeze(y, 2 * i)
    y = expand(y, [d for i in range(n) for d in (reps[i], -1)])
    return reshape(y, multiply(cast(dims, "int64"), stack(reps)))


METHODS = {"tile": tile}

__all__ = ["tile"]
