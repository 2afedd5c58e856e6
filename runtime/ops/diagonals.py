"""Diagonals over any two axes: `diagonal` (Paddle's `paddle.diagonal`, NumPy's
`np.diagonal`: the diagonal becomes the last axis) and `trace` (its sum). `diag` (a vector on
a diagonal, or a matrix's diagonal) stays in `matrix.py`."""
from __future__ import annotations

from . import infer as I
from .reduce import sum as sum_
from .registry import Meta, OpError, bind, register


def _axes(op: str, ndim: int, axis1: int, axis2: int) -> tuple[int, int]:
    """axis1 and axis2 made non-negative; out of range or equal raises naming the op."""
    if ndim < 2:
        raise OpError(f"{op}: x must have at least 2 dims, got {ndim}")
    for name, a in (("axis1", axis1), ("axis2", axis2)):
        if not -ndim <= a < ndim:
            raise OpError(f"{op}: {name}={a} is out of range for a tensor of {ndim} dims")
    a1, a2 = axis1 % ndim, axis2 % ndim
    if a1 == a2:
        raise OpError(f"{op}: axis1 and axis2 are both axis {a1}; they must differ")
    return a1, a2


def _length(rows: int, cols: int, offset: int) -> int:
    if -1 in (rows, cols):
        return -1
    return max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))


def _diagonal_infer(x, offset=0, axis1=0, axis2=1):
    I.check_tensor("diagonal", "x", x)
    a1, a2 = _axes("diagonal", len(x.shape), axis1, axis2)
    rest = tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2))
    return Meta(rest + (_length(x.shape[a1], x.shape[a2], offset),), x.dtype)


def _diagonal_grad_kernel(xp, g, x, offset=0, axis1=0, axis2=1):
    out = xp.zeros(x.shape, dtype=g.dtype)
    n = g.shape[-1]
    rows = xp.arange(n) + max(-offset, 0)
    cols = xp.arange(n) + max(offset, 0)
    xp.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, cols] = g  # a view of out
    return out


def _attrs(a) -> dict:
    return {"offset": a.get("offset", 0), "axis1": a.get("axis1", 0), "axis2": a.get("axis2", 1)}


DIAGONAL = register(
    "diagonal", amp="keep",
    kernel=lambda xp, x, offset=0, axis1=0, axis2=1: xp.diagonal(x, offset, axis1, axis2).copy(),
    infer=_diagonal_infer,
    grad=lambda ins, outs, gs, a: [bind(DIAGONAL_GRAD, (gs[0], ins[0]), _attrs(a))],
    doc="The `offset` diagonal of the matrices spanned by axis1 and axis2, as the last axis.")
DIAGONAL_GRAD = register(
    "diagonal_grad", kernel=_diagonal_grad_kernel, amp="keep",
    infer=lambda g, x, offset=0, axis1=0, axis2=1: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(DIAGONAL, (gs[0],), _attrs(a)), None],
    doc="g written on the diagonal of zeros shaped like x (the grad of diagonal).")


def diagonal(x, offset: int = 0, axis1: int = 0, axis2: int = 1, name=None):
    """The `offset` diagonal of the matrices spanned by `axis1` and `axis2`; the other axes
    come first and the diagonal is the last axis (as `np.diagonal`).

    >>> import runtime as rt
    >>> x = rt.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> rt.diagonal(x).tolist(), x.diagonal(offset=1).tolist()
    ([1.0, 4.0], [2.0])
    """
    a1, a2 = _axes("diagonal", len(x.shape), int(axis1), int(axis2))
    return bind(DIAGONAL, (x,), {"offset": int(offset), "axis1": a1, "axis2": a2})


def trace(x, offset: int = 0, axis1: int = 0, axis2: int = 1, name=None):
    """The sum of the `offset` diagonal over `axis1` and `axis2` (one value per matrix).

    >>> import runtime as rt
    >>> rt.trace(rt.to_tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    return sum_(diagonal(x, offset, axis1, axis2), -1)


METHODS = {"diagonal": diagonal, "trace": trace}

__all__ = ["diagonal", "trace"]
