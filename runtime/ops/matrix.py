"""Matrix functions: `diag` (a vector on a diagonal, or a matrix's diagonal), `inv` (batched
inverse) and `linalg_norm` (Paddle's `paddle.linalg.norm`: vector norms, and matrix norms over
two axes)."""
from __future__ import annotations

from .. import core
from . import infer as I
from .linalg import matmul
from .logic import not_equal
from .math import abs as abs_
from .math import cast, neg, sqrt
from .reduce import max as max_
from .reduce import min as min_
from .reduce import norm as vector_norm
from .reduce import sum as sum_
from .registry import Meta, OpError, OpTypeError, bind, register
from .shape import squeeze, transpose, unsqueeze

# ---- diag ------------------------------------------------------------------------------------


def _diag_kernel(xp, x, offset=0, padding_value=0):
    if x.ndim == 2:
        return xp.diagonal(x, offset).copy()
    out = xp.diag(x, offset)
    if padding_value:
        out[~xp.diag(xp.ones(x.shape, dtype=bool), offset)] = padding_value
    return out


def _diag_infer(x, offset=0, padding_value=0):
    I.check_tensor("diag", "x", x)
    if len(x.shape) == 1:
        n = x.shape[0]
        side = -1 if n == -1 else n + abs(offset)
        return Meta((side, side), x.dtype)
    if len(x.shape) == 2:
        r, c = x.shape
        if -1 in (r, c):
            return Meta((-1,), x.dtype)
        return Meta((max(0, min(r, c - offset) if offset >= 0 else min(r + offset, c)),),
                    x.dtype)
    raise OpError(f"diag: x has shape {I.fmt(x.shape)}; diag takes a 1-D or a 2-D tensor")


def _diag_grad(ins, outs, gs, a):
    x, g = ins[0], gs[0]
    if len(x.shape) == 1:  # the diagonal of the gradient (padding carries none)
        return [bind(DIAG, (g,), {"offset": a.get("offset", 0)})]
    return [bind(DIAG_GRAD, (g, x), {"offset": a.get("offset", 0)})]


def _diag_grad_kernel(xp, g, x, offset=0):
    out = xp.zeros(x.shape, dtype=g.dtype)
    rows, cols = xp.nonzero(xp.diag(xp.ones(g.shape[0], dtype=bool), offset))
    keep = (rows < x.shape[0]) & (cols < x.shape[1])
    out[rows[keep], cols[keep]] = g
    return out


DIAG = register("diag", kernel=_diag_kernel, infer=_diag_infer, grad=_diag_grad, amp="keep",
                doc="A 1-D x on the `offset` diagonal of a square matrix, or a 2-D x's "
                    "`offset` diagonal.")
DIAG_GRAD = register(
    "diag_grad", kernel=_diag_grad_kernel, amp="keep",
    infer=lambda g, x, offset=0: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(DIAG, (gs[0],), {"offset": a.get("offset", 0)}),
                                   None],
    doc="g written on the `offset` diagonal of zeros shaped like x (the grad of diag of a "
        "matrix).")


def diag(x, offset: int = 0, padding_value=0, name=None):
    """A 1-D `x` placed on the `offset` diagonal of a square matrix (other entries
    `padding_value`), or the `offset` diagonal of a 2-D `x`.

    >>> import runtime as rt
    >>> rt.diag(rt.to_tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    >>> rt.diag(rt.to_tensor([[1, 2], [3, 4]]), offset=1).tolist()
    [2]
    """
    if core.is_variable(padding_value):  # (`float(t)` in converted code: a run-time value)
        return _diag_padded(x, int(offset), padding_value)
    attrs = {"offset": int(offset)}
    if padding_value:
        attrs["padding_value"] = padding_value
    return bind(DIAG, (x,), attrs)


def _diag_padded(x, offset: int, padding_value):
    """`diag` of a 1-D x whose off-diagonal value the program computes: the diagonal's
    places (a `diag` of ones) keep x's, the others take the value in x's dtype."""
    from .creation import ones_like
    from .logic import where
    out = bind(DIAG, (x,), {"offset": offset})
    if len(x.shape) != 1:
        return out
    on = bind(DIAG, (ones_like(x, "bool"),), {"offset": offset})
    return where(on, out, cast(padding_value, x.dtype))


# ---- inv -------------------------------------------------------------------------------------


def _inv_infer(x):
    I.check_tensor("inv", "x", x)
    if len(x.shape) < 2 or -1 not in x.shape[-2:] and x.shape[-1] != x.shape[-2]:
        raise OpError(f"inv: x has shape {I.fmt(x.shape)}; it must be a (batch of) square "
                      "matrices [..., n, n]")
    if not x.dtype.is_floating:
        raise OpTypeError(f"inv: x has dtype {x.dtype.name}; inv needs a floating-point tensor")
    return Meta(x.shape, x.dtype)


def _inv_kernel(xp, x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        _inv_infer(Meta(x.shape, None))  # (the precise error about the shape)
    try:
        return xp.linalg.inv(x)
    except xp.linalg.LinAlgError as e:
        raise OpError(f"inv: x (shape {list(x.shape)}) is singular: {e}") from None


def _inv_grad(ins, outs, gs, a):
    y = outs[0]  # d(inv x) = -Y dX Y, so dL/dX = -Y^T G Y^T
    return [neg(matmul(matmul(y, gs[0], transpose_x=True), y, transpose_y=True))]


INV = register("inv", kernel=_inv_kernel, infer=_inv_infer, grad=_inv_grad,
               doc="The inverse of each square matrix in the last two axes.")


def inv(x, name=None):
    """The inverse of `x`'s matrices (the last two axes); a singular matrix raises.

    >>> import runtime as rt
    >>> rt.linalg.inv(rt.to_tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return bind(INV, (x,), {})


# ---- singular values ---------------------------------------------------------------------------


def _svdvals_infer(x):
    I.check_tensor("svdvals", "x", x)
    if len(x.shape) < 2 or not x.dtype.is_floating:
        error = OpError if len(x.shape) < 2 else OpTypeError
        raise error(f"svdvals: x is {x.dtype.name}{I.fmt(x.shape)}; it must be a (batch of) "
                    "floating-point matrices [..., m, n]")
    m, n = x.shape[-2:]
    return Meta((*x.shape[:-2], -1 if -1 in (m, n) else min(m, n)), x.dtype)


def _svdvals_grad_kernel(xp, g, x):
    """d s_i = u_i^T dX v_i, so dL/dX = U diag(g) V^T (singular values taken distinct)."""
    u, _, vh = xp.linalg.svd(x, full_matrices=False)
    return (u * g[..., None, :]) @ vh


SVDVALS = register(
    "svdvals", kernel=lambda xp, x: xp.linalg.svd(x, compute_uv=False), infer=_svdvals_infer,
    grad=lambda ins, outs, gs, a: [bind(SVDVALS_GRAD, (gs[0], ins[0]), {})],
    doc="The singular values of each matrix in the last two axes, largest first.")
SVDVALS_GRAD = register(
    "svdvals_grad", kernel=_svdvals_grad_kernel, infer=lambda g, x: Meta(x.shape, g.dtype),
    doc="U diag(g) V^T: the gradient of svdvals (distinct singular values); not "
        "differentiable again.")


def svdvals(x, name=None):
    """The singular values of `x`'s matrices (the last two axes), largest first.

    >>> import runtime as rt
    >>> rt.linalg.svdvals(rt.to_tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    return bind(SVDVALS, (x,), {})


# ---- norm ------------------------------------------------------------------------------------

_INF = float("inf")


def linalg_norm(x, p=None, axis=None, keepdim: bool = False, name=None):
    """Paddle's `linalg.norm`: with `axis` None or an int, a vector norm (of all elements when
    None; p=None is 2, p=0 counts non-zeros); with two axes, the matrix norm 'fro' (p=None),
    'nuc' (the sum of the singular values), 2 / -2 (the largest / smallest singular value),
    1 / -1 (max / min column sum of |x|) or inf / -inf (max / min row sum).

    >>> import runtime as rt
    >>> rt.linalg.norm(rt.to_tensor([[1.0, -2.0], [3.0, 4.0]]), p=1, axis=[0, 1]).item()
    6.0
    """
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if not isinstance(axis, (list, tuple)):
        if p == 0:
            return sum_(cast(not_equal(x, 0), x.dtype), axis, keepdim=keepdim)
        return vector_norm(x, 2 if p is None else p, axis, keepdim=keepdim)
    if len(axis) != 2:
        raise OpError(f"linalg.norm: axis={list(axis)}; give None, an int or two axes")
    rows, cols = (I.norm_axis("linalg.norm", a, len(x.shape)) for a in axis)
    if p in (None, "fro"):
        return sqrt(sum_(x * x, [rows, cols], keepdim=keepdim))
    if p in ("nuc", 2, -2):
        return _singular_norm(x, p, rows, cols, keepdim)
    reduce = {1: (rows, cols, max_), -1: (rows, cols, min_),
              _INF: (cols, rows, max_), -_INF: (cols, rows, min_)}.get(p)
    if reduce is None:
        raise OpError(f"linalg.norm: the matrix norm p={p!r} is not supported; use 'fro', "
                      "'nuc', 2, -2, 1, -1, inf or -inf")
    summed, picked, pick = reduce
    out = pick(sum_(abs_(x), summed, keepdim=True), picked, keepdim=True)
    return out if keepdim else squeeze(out, sorted([rows, cols]))


def _singular_norm(x, p, rows: int, cols: int, keepdim: bool):
    """'nuc', 2 or -2 over the matrices spanned by axes (rows, cols)."""
    rest = [a for a in range(len(x.shape)) if a not in (rows, cols)]
    s = svdvals(transpose(x, [*rest, rows, cols]))
    out = {"nuc": sum_, 2: max_, -2: min_}[p](s, -1)
    return unsqueeze(out, sorted([rows, cols])) if keepdim else out


METHODS = {"diag": diag, "inverse": inv}

__all__ = ["diag"]
