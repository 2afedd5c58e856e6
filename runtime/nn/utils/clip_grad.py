"""`rt.nn.utils.clip_grad_norm_`: scale parameters' gradients so their joint norm is at most
`max_norm`, in place of the gradients, as Paddle's and PyTorch's function of that name.

Written with ops, so it works on eager gradients and inside a converted training step.
"""
from __future__ import annotations

import math

from ...dtypes import float32
from ...ops import math as _math
from ...ops import reduce as _reduce
from ...ops.combine import stack
from ...ops.creation import zeros


def _norm(g, norm_type: float):
    if g.dtype.itemsize < 4:  # float16 squares overflow
        g = _math.cast(g, float32)
    if math.isinf(norm_type):
        return _reduce.max(_math.abs(g))
    return _reduce.sum(_math.abs(g) ** norm_type) ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False):
    """Multiply every gradient of `parameters` by min(1, max_norm / (total_norm + 1e-6)),
    where total_norm is the `norm_type` norm of all gradients together; returns total_norm.

    >>> import runtime as rt
    >>> w = rt.create_parameter([2], "float32")
    >>> (w * rt.to_tensor([3.0, 4.0])).sum().backward()
    >>> round(rt.nn.utils.clip_grad_norm_([w], max_norm=1.0).item(), 4)
    5.0
    >>> [round(v, 4) for v in w.grad.tolist()]
    [0.6, 0.8]
    """
    if hasattr(parameters, "grad"):  # one tensor
        parameters = [parameters]
    norm_type = float(norm_type)
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return zeros([], float32)
    norms = stack([_norm(p.grad, norm_type) for p in params])
    if math.isinf(norm_type):
        total = _reduce.max(norms)
    else:
        total = _reduce.sum(norms ** norm_type) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"clip_grad_norm_: the total {norm_type} norm of the gradients is "
                           f"{float(total)}; pass error_if_nonfinite=False to clip anyway")
    coef = _math.minimum(max_norm / (total + 1e-6), 1.0)
    for p in params:
        p.grad = p.grad * _math.cast(coef, p.grad.dtype)
    return total
