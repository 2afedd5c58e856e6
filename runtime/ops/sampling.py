"""`multinomial`: draw category indices from (unnormalised) probabilities, with the default
generator (`rt.seed` makes it repeatable), eagerly and each time a program runs."""
from __future__ import annotations

import numpy as np

from .. import backend
from ..dtypes import int64
from . import infer as I
from .random import host_generator, random_op
from .registry import Meta, OpError, bind


def _multinomial_kernel(xp, x, num_samples=1, replacement=False):
    p = backend.to_numpy(x).astype(np.float64)
    rows = p.reshape(-1, p.shape[-1])
    if (rows < 0).any() or not np.isfinite(rows).all():
        raise OpError("multinomial: x holds a negative, inf or nan probability")
    totals = rows.sum(axis=1)
    if (totals <= 0).any():
        raise OpError("multinomial: a row of x sums to 0; each needs a positive probability")
    if not replacement and (np.count_nonzero(rows, axis=1) < num_samples).any():
        raise OpError(f"multinomial: num_samples={num_samples} without replacement, but a row "
                      "of x has fewer non-zero probabilities")
    gen = host_generator()
    out = np.stack([gen.choice(rows.shape[1], size=num_samples, replace=replacement,
                               p=row / total) for row, total in zip(rows, totals)])
    return xp.asarray(out.reshape(*p.shape[:-1], num_samples).astype(np.int64))


def _multinomial_infer(x, num_samples=1, replacement=False):
    I.check_tensor("multinomial", "x", x)
    if len(x.shape) not in (1, 2):
        raise OpError(f"multinomial: x has shape {I.fmt(x.shape)}; it must be 1-D or 2-D")
    return Meta((*x.shape[:-1], num_samples), int64)


MULTINOMIAL = random_op(
    "multinomial", kernel=_multinomial_kernel, infer=_multinomial_infer,
    doc="num_samples category indices per row of x, drawn with probabilities x / sum(x).")


def multinomial(x, num_samples: int = 1, replacement: bool = False, name=None):
    """`num_samples` indices per row of `x` (1-D or 2-D, non-negative weights), each drawn
    with probability proportional to its weight; without `replacement` no index repeats.

    >>> import runtime as rt
    >>> _ = rt.seed(0)
    >>> rt.multinomial(rt.to_tensor([0.0, 1.0, 0.0]), 2, replacement=True).tolist()
    [1, 1]
    """
    if int(num_samples) < 1:
        raise OpError(f"multinomial: num_samples must be >= 1, got {num_samples}")
    return bind(MULTINOMIAL, (x,), {"num_samples": int(num_samples),
                                    "replacement": bool(replacement)})


METHODS = {"multinomial": multinomial}

__all__ = ["multinomial"]
