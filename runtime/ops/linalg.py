"""Linear algebra: `matmul`, `einsum`, and `bmm` / `dot` as checked compositions of existing
ops (their gradients come from those ops)."""
from __future__ import annotations

from .. import dtypes
from . import infer as I
from .elementwise import coerce, reflected, sum_to_like
from .math import multiply, scale
from .reduce import sum as _sum
from .registry import Meta, OpError, bind, register


def _split(equation: str):
    lhs, out = equation.split("->")
    return lhs.split(","), out


def normalize_equation(equation: str, n_operands: int) -> str:
    """Explicit form of an einsum equation ('ij,jk' -> 'ij,jk->ik'), checked for arity."""
    eq = equation.replace(" ", "")
    lhs, out = eq.split("->") if "->" in eq else (eq, None)
    subs = lhs.split(",")
    if len(subs) != n_operands:
        raise OpError(f"einsum: equation {equation!r} has {len(subs)} operand subscripts but "
                      f"{n_operands} operands were given")
    if out is None:  # implicit mode: letters seen once, sorted; '...' first
        letters = [c for s in subs for c in s.replace("...", "")]
        out = ("..." if any("..." in s for s in subs) else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return ",".join(subs) + "->" + out


def _einsum_kernel(xp, *operands, equation):
    if len({a.dtype for a in operands}) > 1:
        dt = dtypes.of_array(operands[0])
        for a in operands[1:]:
            dt = dtypes.promote(dt, dtypes.of_array(a))
        operands = [a.astype(dt.np, copy=False) for a in operands]
    dt = operands[0].dtype
    if dt == dtypes.bfloat16.np:  # NumPy's einsum has no bfloat16 loop: accumulate in float32
        operands = [a.astype(dtypes.float32.np) for a in operands]
        return xp.einsum(equation, *operands).astype(dt)
    return xp.einsum(equation, *operands)


def _einsum_infer(*metas, equation):
    subs, out = _split(equation)
    sizes: dict = {}
    ell: tuple = ()
    for i, (sub, m) in enumerate(zip(subs, metas)):
        I.check_tensor("einsum", f"operand {i}", m)
        letters = sub.replace("...", "")
        shape = tuple(m.shape)
        if "..." in sub:
            n_ell = len(shape) - len(letters)
            if n_ell < 0:
                raise OpError(f"einsum: operand {i} has shape {I.fmt(shape)} but subscripts "
                              f"{sub!r} name at least {len(letters)} dims")
            at = sub.index("...")
            ell = I.broadcast_shapes("einsum", ell, shape[at:at + n_ell],
                                     names=("'...' of earlier operands", f"operand {i}"))
            shape = shape[:at] + shape[at + n_ell:]
        elif len(shape) != len(letters):
            raise OpError(f"einsum: operand {i} has shape {I.fmt(shape)} (rank {len(shape)}) "
                          f"but subscripts {sub!r} name {len(letters)} dims")
        for c, d in zip(letters, shape):
            prev = sizes.get(c, -1)
            if prev != -1 and d != -1 and prev != d:
                raise OpError(f"einsum: subscript {c!r} has size {prev} in an earlier operand "
                              f"but {d} in operand {i} (shape {I.fmt(m.shape)})")
            sizes[c] = d if prev == -1 else prev
    dims: list = []
    for j, piece in enumerate(out.split("...")):
        if j:
            dims.extend(ell)
        for c in piece:
            if c not in sizes:
                raise OpError(f"einsum: output subscript {c!r} of {equation!r} appears in no "
                              "operand")
            dims.append(sizes[c])
    dtype = metas[0].dtype
    for m in metas[1:]:
        dtype = dtypes.promote(dtype, m.dtype)
    return Meta(tuple(dims), dtype)


def _einsum_grad(ins, outs, gs, a):
    subs, out = _split(a["equation"])
    grads = []
    for i, (sub, x) in enumerate(zip(subs, ins)):
        letters = sub.replace("...", "")
        if len(set(letters)) != len(letters):
            raise OpError(f"einsum: the gradient for operand {i} with a repeated subscript "
                          f"({sub!r}, a diagonal) is not supported")
        terms = [out] + [s for j, s in enumerate(subs) if j != i]
        operands = [gs[0]] + [t for j, t in enumerate(ins) if j != i]
        if set(letters) - set("".join(terms)):  # letters summed away: bring them back as ones
            terms.append(sub)
            operands.append(scale(x, 0.0, 1.0))
        batched = any("..." in t for t in terms)
        target = sub if "..." in sub or not batched else "..." + sub
        grads.append(sum_to_like(einsum(",".join(terms) + "->" + target, *operands), x))
    return grads


EINSUM = register("einsum", kernel=_einsum_kernel, infer=_einsum_infer, grad=_einsum_grad,
                  amp="white")


def einsum(equation: str, *operands, name=None):
    """Einstein summation over the operands (NumPy's subscripts, '...' for broadcast dims).

    >>> import runtime as rt
    >>> rt.einsum('ij,jk->ik', rt.ones([2, 3]), rt.ones([3, 4])).shape
    [2, 4]
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return bind(EINSUM, operands, {"equation": normalize_equation(equation, len(operands))})


def bmm(x, y, name=None):
    """Batched matrix product of two 3-D tensors [b, n, m] @ [b, m, k] -> [b, n, k].

    >>> import runtime as rt
    >>> rt.bmm(rt.ones([2, 3, 4]), rt.ones([2, 4, 5])).shape
    [2, 3, 5]
    """
    xs, ys = list(x.shape), list(y.shape)
    if len(xs) != 3 or len(ys) != 3:
        raise OpError(f"bmm: x and y must be 3-D, got x of shape {I.fmt(xs)} and y of shape "
                      f"{I.fmt(ys)}")
    if -1 not in (xs[0], ys[0]) and xs[0] != ys[0]:
        raise OpError(f"bmm: x has shape {I.fmt(xs)} but y has shape {I.fmt(ys)}; batch sizes "
                      f"{xs[0]} and {ys[0]} differ")
    return matmul(x, y)


def dot(x, y, name=None):
    """Inner product of 1-D tensors, or row-wise of 2-D tensors ([n, k] . [n, k] -> [n]).

    >>> import runtime as rt
    >>> float(rt.dot(rt.to_tensor([1.0, 2.0]), rt.to_tensor([3.0, 4.0])))
    11.0
    """
    xs, ys = list(x.shape), list(y.shape)
    if len(xs) not in (1, 2) or len(xs) != len(ys) or any(
            a != b and -1 not in (a, b) for a, b in zip(xs, ys)):
        raise OpError(f"dot: x has shape {I.fmt(xs)} but y has shape {I.fmt(ys)}; dot needs "
                      "two 1-D or two 2-D tensors of the same shape")
    return _sum(multiply(x, y), axis=-1)


def inner(x, y, name=None):
    """The sum product over the last axes of x and y: shape x.shape[:-1] + y.shape[:-1]
    (the dot product of 1-D tensors; `np.inner`). A 0-d operand multiplies.

    >>> import runtime as rt
    >>> rt.inner(rt.to_tensor([[1.0, 2.0], [3.0, 4.0]]), rt.to_tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    nx, ny = len(getattr(x, "shape", ())), len(getattr(y, "shape", ()))
    if nx == 0 or ny == 0:
        return multiply(x, y)
    if -1 not in (x.shape[-1], y.shape[-1]) and x.shape[-1] != y.shape[-1]:
        raise OpError(f"inner: x has shape {I.fmt(x.shape)} but y has shape {I.fmt(y.shape)}; "
                      "their last dims must be equal")
    if nx + ny - 1 > 26:
        raise OpError(f"inner: x and y have {nx} and {ny} dims; at most 27 together")
    letters = "abcdefghijklmnopqrstuvwxy"
    xs, ys = letters[:nx - 1], letters[nx - 1:nx + ny - 2]
    return einsum(f"{xs}z,{ys}z->{xs}{ys}", x, y)


# ---- matmul ---------------------------------------------------------------------------------

def matmul_rows(xp, x, y):
    """x [..., k] @ y [k, n]: with x C-contiguous and more than 2-D, one GEMM over all of x's
    rows ([prod(...), k] @ [k, n], a free reshape) instead of NumPy's one GEMM per batch
    entry (1.4x faster at [16, 64, 256] @ [256, 1024] on one thread)."""
    if x.ndim > 2 and y.ndim == 2 and x.flags.c_contiguous:
        out = xp.matmul(x.reshape(-1, x.shape[-1]), y)
        return out.reshape(x.shape[:-1] + y.shape[-1:])
    return xp.matmul(x, y)


def _matmul_kernel(xp, x, y, transpose_x=False, transpose_y=False):
    if transpose_x:
        x = xp.swapaxes(x, -1, -2) if x.ndim > 1 else x
    if transpose_y:
        y = xp.swapaxes(y, -1, -2) if y.ndim > 1 else y
    x, y = coerce(x, y)
    # (NumPy's matmul of ml_dtypes bfloat16 accumulates and returns float32)
    return matmul_rows(xp, x, y).astype(x.dtype, copy=False)


def _matmul_infer(x, y, transpose_x=False, transpose_y=False):
    I.check_tensor("matmul", "x", x)
    I.check_tensor("matmul", "y", y)
    xs, ys = list(x.shape), list(y.shape)
    if not xs or not ys:
        raise OpError("matmul: x and y must have at least one dimension, got shapes "
                      f"{I.fmt(xs)} and {I.fmt(ys)}")
    if transpose_x and len(xs) > 1:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if transpose_y and len(ys) > 1:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    k1 = xs[-1]
    k2 = ys[-2] if len(ys) > 1 else ys[0]
    if k1 != k2 and k1 != -1 and k2 != -1:
        raise OpError(f"matmul: x has shape {I.fmt(x.shape)} but y has shape {I.fmt(y.shape)}; "
                      f"inner dimensions {k1} and {k2} differ")
    batch = I.broadcast_shapes("matmul", tuple(xs[:-2]), tuple(ys[:-2]))
    out = list(batch) + ([xs[-2]] if len(xs) > 1 else []) + ([ys[-1]] if len(ys) > 1 else [])
    return Meta(tuple(out), dtypes.promote(x.dtype, y.dtype))


def _matmul_grad(ins, outs, gs, a):
    x, y = ins
    g = gs[0]
    tx, ty = a.get("transpose_x", False), a.get("transpose_y", False)
    if x.ndim == 1 or y.ndim == 1:
        return _matmul_vector_grad(x, y, g, tx, ty)
    if not tx and not ty:
        gx, gy = matmul(g, y, transpose_y=True), matmul(x, g, transpose_x=True)
    elif tx and not ty:
        gx, gy = matmul(y, g, transpose_y=True), matmul(x, g)
    elif not tx and ty:
        gx, gy = matmul(g, y), matmul(g, x, transpose_x=True)
    else:
        gx, gy = matmul(y, g, True, True), matmul(g, x, True, True)
    return [sum_to_like(gx, x), sum_to_like(gy, y)]


def _matmul_vector_grad(x, y, g, tx, ty):
    """A 1-D operand has no matrix dim to transpose into: the same products as einsums."""
    xs = "k" if x.ndim == 1 else ("...km" if tx else "...mk")
    ys = "k" if y.ndim == 1 else ("...nk" if ty else "...kn")
    gsub = ("..." if x.ndim > 1 or y.ndim > 1 else "") + "m" * (x.ndim > 1) + "n" * (y.ndim > 1)
    batched = "..." in gsub

    def target(sub):  # summing over batch dims happens in sum_to_like
        return sub if "..." in sub or not batched else "..." + sub

    gx = einsum(f"{gsub},{ys}->{target(xs)}", g, y)
    gy = einsum(f"{xs},{gsub}->{target(ys)}", x, g)
    return [sum_to_like(gx, x), sum_to_like(gy, y)]


MATMUL = register("matmul", kernel=_matmul_kernel, infer=_matmul_infer, grad=_matmul_grad,
                  amp="white")


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """Matrix product with NumPy broadcasting over batch dims.

    >>> import runtime as rt
    >>> rt.matmul(rt.ones([2, 3]), rt.ones([3, 4])).shape
    [2, 4]
    """
    attrs = {}
    if transpose_x:
        attrs["transpose_x"] = True
    if transpose_y:
        attrs["transpose_y"] = True
    return bind(MATMUL, (x, y), attrs)


METHODS = {"dot": dot, "bmm": bmm, "inner": inner,
           "__matmul__": matmul, "__rmatmul__": reflected(matmul), "matmul": matmul}

__all__ = ["bmm", "dot", "einsum", "inner", "matmul", "normalize_equation"]
