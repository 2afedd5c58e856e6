"""Linear algebra beyond `matmul` (which lives in `math.py`): `einsum`, and `bmm` / `dot`
as checked compositions of existing ops (their gradients come from those ops)."""
from __future__ import annotations

from .. import dtypes
from . import infer as I
from .math import matmul, multiply, scale, sum_to_like
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


METHODS = {"dot": dot, "bmm": bmm}

__all__ = ["bmm", "dot", "einsum", "normalize_equation"]
