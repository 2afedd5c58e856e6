"""Adam and AdamW updates of large parameters written as elementwise ops while a program is
being built, so the program's fusion (`runtime/program/fusion.py`) runs each update as one
chunked call (one generated C function where a compiler is found) instead of a kernel that
makes a full-size temporary per arithmetic step.

The ops are the ones the `adam_update` kernel (`runtime/ops/optim.py`) performs, in the same
order and on the same dtypes, so the results are those of the kernel: first the few 0-d
values (bias corrections, the new beta powers), then the elementwise chain over the
parameter. Small parameters keep the single `adam_update` op: below the fusion threshold one
kernel call costs less than a dozen op calls.
"""
from __future__ import annotations

from ..ops.math import sqrt
from ..program import fusion

_DTYPES = ("float32", "float64")


def wanted(param, grad, state: dict) -> bool:
    """Whether the update of `param` is written as elementwise ops (a program is being built,
    the parameter is large enough to be fused, one float dtype throughout)."""
    if not fusion.enabled():
        return False
    shape = tuple(param.shape)
    n = 1
    for d in shape:
        n *= d
    least = fusion.limits()[0]
    dt = param.dtype.name
    return (len(shape) >= 1 and shape[0] >= 2 and n >= least and dt in _DTYPES
            and grad.dtype.name == dt and -1 not in tuple(grad.shape)
            and all(t.dtype.name == dt for k, t in state.items() if k in ("moment1",
                                                                          "moment2")))


def adam(p, g, lr, m1, m2, b1p, b2p, beta1, beta2, epsilon, l2=0.0, decay=None,
         lr_ratio=1.0):
    """(param, moment1, moment2, beta1_pow, beta2_pow) after one Adam step; `decay` is
    AdamW's coefficient (the parameter is scaled by `1 - lr * decay` first)."""
    # the 0-d values first (they do not take part in the chain over the parameter)
    if lr_ratio != 1.0:
        lr = lr * lr_ratio
    scale = None
    if decay is not None:
        scale = (1.0 - lr * decay).astype(p.dtype)
    corr2 = sqrt(1.0 - b2p)
    lr_t = (lr * corr2 / (1.0 - b1p)).astype(p.dtype)
    eps_t = (epsilon * corr2).astype(p.dtype)
    new_b1p, new_b2p = b1p * beta1, b2p * beta2
    # the elementwise chain over the parameter: one fused run
    if scale is not None:
        p = p * scale
    if l2:
        g = g + l2 * p
    m1 = m1 * beta1
    m1 = m1 + (1.0 - beta1) * g
    m2 = m2 * beta2
    m2 = m2 + (1.0 - beta2) * (g * g)
    step = sqrt(m2)
    step = step + eps_t
    step = m1 / step
    step = step * lr_t
    return p - step, m1, m2, new_b1p, new_b2p
