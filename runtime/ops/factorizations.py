"""`paddle.linalg` functions computed from a factorization of square matrices: `det`,
`slogdet`, `solve` and `cholesky`, each an op with its gradient written with other ops
(`inv`, `matmul`, `tril`), so it differentiates again. All take batches: the matrices are
the last two axes."""
from __future__ import annotations

from . import infer as I
from .combine import stack
from .creation import tril
from .elementwise import unbroadcast
from .linalg import matmul
from .matrix import inv
from .registry import Meta, OpError, OpTypeError, bind, register
from .shape import squeeze, transpose, unsqueeze


def _square(op: str, x) -> None:
    I.check_tensor(op, "x", x)
    if len(x.shape) < 2 or -1 not in x.shape[-2:] and x.shape[-1] != x.shape[-2]:
        raise OpError(f"{op}: x has shape {I.fmt(x.shape)}; it must be a (batch of) square "
                      "matrices [..., n, n]")
    if not x.dtype.is_floating:
        raise OpTypeError(f"{op}: x has dtype {x.dtype.name}; {op} needs a floating-point "
                          "tensor")


def _mT(x):
    """The matrices of x transposed (the last two axes swapped)."""
    n = len(x.shape)
    return transpose(x, list(range(n - 2)) + [n - 1, n - 2])


def _checked(op: str, xp, fn, x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        _square(op, Meta(x.shape, None))
    try:
        return fn(x)
    except xp.linalg.LinAlgError as e:
        raise OpError(f"{op}: x (shape {list(x.shape)}) {e}") from None


def _det_infer(x):
    _square("det", x)
    return Meta(tuple(x.shape[:-2]), x.dtype)


def _det_grad(ins, outs, gs, a):  # d det(X) = det(X) tr(X^-1 dX)
    scaled = unsqueeze(gs[0] * outs[0], [-1, -2])
    return [scaled * _mT(inv(ins[0]))]


DET = register(
    "det", kernel=lambda xp, x: _checked("det", xp, xp.linalg.det, x), infer=_det_infer,
    grad=_det_grad, amp="black", doc="The determinant of each matrix.")


def _slogdet_infer(x):
    _square("slogdet", x)
    batch = tuple(x.shape[:-2])
    return Meta(batch, x.dtype), Meta(batch, x.dtype)


def _slogdet_kernel(xp, x):
    # (on a batch of matrices: for one matrix NumPy gives two scalars, not arrays)
    batch = x.reshape((-1,) + x.shape[-2:]) if x.ndim >= 2 else x
    sign, logabs = _checked("slogdet", xp, xp.linalg.slogdet, batch)
    return (sign.reshape(x.shape[:-2]).astype(x.dtype, copy=False),
            logabs.reshape(x.shape[:-2]).astype(x.dtype, copy=False))


SLOGDET = register(
    "slogdet", kernel=_slogdet_kernel, infer=_slogdet_infer, amp="black",
    grad=lambda ins, outs, gs, a: [
        None if gs[1] is None else unsqueeze(gs[1], [-1, -2]) * _mT(inv(ins[0]))],
    doc="The sign and log |det| of each matrix (the sign has no gradient).")


def _solve_infer(x, y):
    _square("solve", x)
    I.check_tensor("solve", "y", y)
    if len(y.shape) < 2:
        raise OpError(f"solve: y has shape {I.fmt(y.shape)}; it must be [..., n, k]")
    n, rows = x.shape[-1], y.shape[-2]
    if -1 not in (n, rows) and n != rows:
        raise OpError(f"solve: x has shape {I.fmt(x.shape)} but y has shape {I.fmt(y.shape)}; "
                      f"y needs {n} rows")
    batch = I.broadcast_shapes("solve", tuple(x.shape[:-2]), tuple(y.shape[:-2]))
    return Meta(batch + tuple(y.shape[-2:]), x.dtype)


def _solve_kernel(xp, x, y):
    return _checked("solve", xp, lambda a: xp.linalg.solve(a, y.astype(a.dtype, copy=False)), x)


def _solve_grad(ins, outs, gs, a):  # X = A^-1 B: dB = A^-T G, dA = -dB X^T
    gy = solve(_mT(ins[0]), gs[0])
    return [unbroadcast(-matmul(gy, outs[0], transpose_y=True), ins[0]),
            unbroadcast(gy, ins[1])]


SOLVE = register("solve", kernel=_solve_kernel, infer=_solve_infer, grad=_solve_grad,
                 amp="black", doc="X with x @ X = y, for each matrix of x.")


def _phi(x):
    """The lower triangle with the diagonal halved."""
    return 0.5 * (tril(x) + tril(x, -1))


def _cholesky_grad(ins, outs, gs, a):
    # Murray (2016): dA = L^-T Phi(L^T dL) L^-1, symmetrised (A's two triangles are one entry)
    low = outs[0]
    low_inv = inv(low)
    inner = _mT(low_inv) @ _phi(_mT(low) @ gs[0]) @ low_inv
    return [0.5 * (inner + _mT(inner))]


CHOLESKY = register(
    "cholesky", kernel=lambda xp, x: _checked("cholesky", xp, xp.linalg.cholesky, x),
    infer=lambda x: (_square("cholesky", x), Meta(x.shape, x.dtype))[1],
    grad=_cholesky_grad, amp="black",
    doc="The lower-triangular L with L @ L^T = x, for each symmetric positive-definite x.")


def det(x, name=None):
    """The determinant of each matrix of `x` (the last two axes).

    >>> import runtime as rt
    >>> rt.linalg.det(rt.to_tensor([[2.0, 1.0], [1.0, 3.0]])).item()
    5.0
    """
    return bind(DET, (x,), {})


def slogdet(x, name=None):
    """Paddle's `slogdet`: one tensor of shape [2, *batch] holding the sign of each
    determinant, then log |det| (differentiable; the sign is not).

    >>> import runtime as rt
    >>> [round(v, 4) for v in rt.linalg.slogdet(rt.to_tensor([[-2.0, 0.0], [0.0, 3.0]])).tolist()]
    [-1.0, 1.7918]
    """
    sign, logabs = bind(SLOGDET, (x,), {})
    return stack([sign.detach(), logabs])


def solve(x, y, left: bool = True, name=None):
    """The solution `out` of `x @ out = y` (x square, batched; y [..., n, k] or [n]).
    `left=False` solves `out @ x = y` instead.

    >>> import runtime as rt
    >>> rt.linalg.solve(rt.to_tensor([[2.0, 0.0], [0.0, 4.0]]), rt.to_tensor([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    if not left:
        return _mT(solve(_mT(x), _mT(y)))
    if len(y.shape) == 1:
        return squeeze(bind(SOLVE, (x, unsqueeze(y, -1)), {}), -1)
    return bind(SOLVE, (x, y), {})


def cholesky(x, upper: bool = False, name=None):
    """The Cholesky factor of each symmetric positive-definite matrix: lower L with
    `L @ L^T = x`, or with `upper=True` the upper `U = L^T` (`U^T @ U = x`). A matrix that
    is not positive-definite raises.

    >>> import runtime as rt
    >>> rt.linalg.cholesky(rt.to_tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    low = bind(CHOLESKY, (x,), {})
    return _mT(low) if upper else low


METHODS = {"det": det, "slogdet": slogdet, "solve": solve, "cholesky": cholesky}

__all__ = ["cholesky", "det", "slogdet", "solve"]
