"""Paddle's names for products, composed of `matmul` and slicing (so gradients and static
programs come from those ops): `mm`, `mv`, `linalg.multi_dot`, `linalg.matrix_power`,
`cross`, `addmm`; distances `dist` and `cdist`; and `clone` / `inverse` at Paddle's top-level
place."""
from __future__ import annotations

from . import infer as I
from .combine import concat
from .creation import eye
from .index import slice as slice_
from .linalg import matmul
from .logic import where
from .math import abs as abs_
from .math import assign, cast, sqrt
from .matrix import inv
from .reduce import max as max_
from .reduce import min as min_
from .reduce import norm as vector_norm
from .reduce import sum as sum_
from .registry import OpError
from .shape import unsqueeze


def mm(input, mat2, name=None):
    """The matrix product `input @ mat2` (Paddle's `mm`: `matmul`'s broadcasting rules).

    >>> import runtime as rt
    >>> rt.mm(rt.ones([2, 3]), rt.ones([3, 4])).shape
    [2, 4]
    """
    return matmul(input, mat2)


def mv(x, vec, name=None):
    """The product of a matrix [m, n] and a vector [n]: a vector [m].

    >>> import runtime as rt
    >>> rt.mv(rt.to_tensor([[1.0, 2.0], [3.0, 4.0]]), rt.to_tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    if len(x.shape) != 2 or len(vec.shape) != 1:
        raise OpError(f"mv: x has shape {I.fmt(x.shape)} and vec {I.fmt(vec.shape)}; mv "
                      "takes a 2-D x and a 1-D vec")
    return matmul(x, vec)


def multi_dot(x, name=None):
    """The product of a list of matrices, left to right (the first may be a vector [n] and
    the last a vector [k], as in `np.linalg.multi_dot`).

    >>> import runtime as rt
    >>> rt.linalg.multi_dot([rt.ones([2, 3]), rt.ones([3, 4]), rt.ones([4])]).tolist()
    [12.0, 12.0]
    """
    x = list(x)
    if len(x) < 2:
        raise OpError(f"multi_dot: x must hold at least 2 tensors, got {len(x)}")
    for i, t in enumerate(x):
        allowed = (1, 2) if i in (0, len(x) - 1) else (2,)
        if len(t.shape) not in allowed:
            raise OpError(f"multi_dot: x[{i}] has shape {I.fmt(t.shape)}; the first and last "
                          "may be 1-D or 2-D, the others must be 2-D")
    out = x[0]
    for t in x[1:]:
        out = matmul(out, t)
    return out


def matrix_power(x, n: int, name=None):
    """`x` multiplied by itself `n` times (the matrices in the last two axes); n = 0 gives
    the identity, n < 0 powers of the inverse.

    >>> import runtime as rt
    >>> rt.linalg.matrix_power(rt.to_tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise OpError(f"matrix_power: n must be an int, got {n!r}")
    if len(x.shape) < 2 or -1 not in x.shape[-2:] and x.shape[-1] != x.shape[-2]:
        raise OpError(f"matrix_power: x has shape {I.fmt(x.shape)}; it must be a (batch of) "
                      "square matrices [..., n, n]")
    if n == 0:
        if x.shape[-1] == -1:
            raise OpError("matrix_power: n=0 needs the size of x's matrices when the program "
                          f"is built; x has shape {I.fmt(x.shape)}")
        return x * 0 + eye(x.shape[-1], dtype=x.dtype)
    base = inv(x) if n < 0 else x
    out, square, k = None, base, abs(n)
    while k:  # square-and-multiply: log2(n) products
        if k & 1:
            out = square if out is None else matmul(out, square)
        k >>= 1
        if k:
            square = matmul(square, square)
    return out


def _cross_axis(x, y, axis) -> int:
    if list(x.shape) != list(y.shape):
        raise OpError(f"cross: x has shape {I.fmt(x.shape)} but y has shape {I.fmt(y.shape)}; "
                      "they must be equal")
    if axis == 9:  # Paddle's default: the first axis of size 3
        sized = [i for i, d in enumerate(x.shape) if d == 3]
        if not sized:
            raise OpError(f"cross: x has shape {I.fmt(x.shape)}; no axis has size 3")
        return sized[0]
    axis = I.norm_axis("cross", axis, len(x.shape))
    if x.shape[axis] not in (3, -1):
        raise OpError(f"cross: axis {axis} of x (shape {I.fmt(x.shape)}) has size "
                      f"{x.shape[axis]}, not 3")
    return axis


def cross(x, y, axis: int = 9, name=None):
    """The cross product of 3-vectors along `axis` (Paddle's default 9: the first axis of
    size 3).

    >>> import runtime as rt
    >>> rt.cross(rt.to_tensor([1.0, 0.0, 0.0]), rt.to_tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    axis = _cross_axis(x, y, axis)

    def part(t, i):
        return slice_(t, [axis], [i], [i + 1])

    a0, a1, a2 = (part(x, i) for i in range(3))
    b0, b1, b2 = (part(y, i) for i in range(3))
    return concat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)


def addmm(input, x, y, beta: float = 1.0, alpha: float = 1.0, name=None):
    """`beta * input + alpha * (x @ y)` (input broadcast to the product's shape).

    >>> import runtime as rt
    >>> rt.addmm(rt.ones([2, 2]), rt.ones([2, 3]), rt.ones([3, 2]), beta=0.5).tolist()
    [[3.5, 3.5], [3.5, 3.5]]
    """
    return input * beta + matmul(x, y) * alpha


def dist(x, y, p: float = 2, name=None):
    """The p-norm of `x - y` (broadcast) over all elements: p = inf the largest |.|, -inf
    the smallest, 0 how many differ.

    >>> import runtime as rt
    >>> rt.dist(rt.to_tensor([3.0, 0.0]), rt.to_tensor([0.0, 4.0])).item()
    5.0
    """
    d = x - y
    if p == 0:
        return sum_(cast(d != 0, d.dtype))
    if p == float("-inf"):
        return min_(abs_(d))
    if p == 2:
        return _safe_sqrt(sum_(d * d))
    return vector_norm(d, p=float(p))


def _safe_sqrt(r2):
    """sqrt with a zero gradient at 0 (where sqrt's is infinite): equal points are at a
    distance whose gradient is 0, as in Paddle."""
    return where(r2 > 0, sqrt(where(r2 > 0, r2, 1.0)), r2 * 0.0)


def cdist(x, y, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
          name=None):
    """The p-norm distances between the rows of x [..., P, M] and of y [..., R, M]: shape
    [..., P, R] (a zero distance has a zero gradient).

    >>> import runtime as rt
    >>> rt.cdist(rt.to_tensor([[0.0, 0.0]]), rt.to_tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[5.0, 1.0]]
    """
    d = unsqueeze(x, -2) - unsqueeze(y, -3)
    if p == 2:
        return _safe_sqrt(sum_(d * d, -1))
    if p == float("inf"):
        return max_(abs_(d), -1)
    if p == 0:
        return sum_(cast(d != 0, d.dtype), -1)
    return vector_norm(d, p=float(p), axis=-1)


def clone(x, name=None):
    """A copy of `x` that keeps its gradient path (Paddle's `paddle.clone`; `x.clone()`).

    >>> import runtime as rt
    >>> rt.clone(rt.to_tensor([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    return assign(x)


def inverse(x, name=None):
    """The inverse of each square matrix (Paddle's `paddle.inverse`; `rt.linalg.inv`)."""
    return inv(x)


METHODS = {"mm": mm, "mv": mv, "matrix_power": matrix_power, "cross": cross, "addmm": addmm,
           "dist": dist, "cdist": cdist}

__all__ = ["addmm", "cdist", "clone", "cross", "dist", "inverse", "mm", "mv"]
