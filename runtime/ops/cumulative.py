"""`cumprod`: running products along an axis. Its gradient kernel runs the recurrence
`r[i] = g[i] + x[i+1] * r[i+1]` backwards, so zeros in x give exact gradients (no division
by x)."""
from __future__ import annotations

from . import infer as I
from .math import cast
from .registry import Meta, bind, register
from .shape import reshape


def _cumprod_infer(x, axis):
    I.check_tensor("cumprod", "x", x)
    I.norm_axis("cumprod", axis, len(x.shape), "dim")
    return Meta(x.shape, x.dtype)


def _cumprod_grad_kernel(xp, g, x, axis):
    """dx[i] = prod(x[:i]) * sum_{j >= i} g[j] * prod(x[i+1 : j+1])."""
    g, x = xp.moveaxis(g, axis, 0), xp.moveaxis(x, axis, 0)
    n = x.shape[0]
    r = xp.empty_like(g)
    r[n - 1] = g[n - 1]
    for i in range(n - 2, -1, -1):
        r[i] = g[i] + x[i + 1] * r[i + 1]
    before = xp.concatenate([xp.ones_like(x[:1]), xp.cumprod(x[:-1], axis=0)], axis=0)
    return xp.moveaxis(before * r, 0, axis).astype(g.dtype, copy=False)


CUMPROD = register(
    "cumprod", kernel=lambda xp, x, axis: xp.cumprod(x, axis=axis, dtype=x.dtype),
    infer=_cumprod_infer,
    grad=lambda ins, outs, gs, a: [bind(CUMPROD_GRAD, (gs[0], ins[0]), {"axis": a["axis"]})],
    doc="Running products of x along `axis`.")
CUMPROD_GRAD = register(
    "cumprod_grad", kernel=_cumprod_grad_kernel, amp="keep",
    infer=lambda g, x, axis: Meta(x.shape, g.dtype),
    doc="The gradient of cumprod (exact where x has zeros); not differentiable again.")


def cumprod(x, dim: int | None = None, dtype=None, name=None):
    """Running products along `dim` (of the flattened `x` when None), optionally cast to
    `dtype` first.

    >>> import runtime as rt
    >>> rt.cumprod(rt.to_tensor([1.0, 2.0, 3.0]), dim=0).tolist()
    [1.0, 2.0, 6.0]
    """
    if dim is None:
        x, dim = reshape(x, [-1]), 0
    if dtype is not None:
        x = cast(x, dtype)
    if not x.shape:
        return x
    return bind(CUMPROD, (x,), {"axis": I.norm_axis("cumprod", dim, len(x.shape), "dim")})


METHODS = {"cumprod": cumprod}

__all__ = ["cumprod"]
