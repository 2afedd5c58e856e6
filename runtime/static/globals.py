"""`rt.static.create_global_var`: a tensor that lives outside any one program."""
from __future__ import annotations

import numpy as np

from ..dtypes import convert_dtype
from ..tensor import Tensor


def create_global_var(shape, value, dtype, persistable: bool = False, force_cpu: bool = False,
                      name: str | None = None):
    """A tensor of `shape` filled with `value` (Paddle's `static.create_global_var`). It is an
    eager Tensor in both modes: a program that uses it captures it as a persistable variable,
    so `set_value` / `rt.assign(x, var)` inside the program write it when the program runs.
    `force_cpu` is accepted and has no effect (the tensor lives on the current device, as
    every tensor does here).

    >>> import runtime as rt
    >>> v = rt.static.create_global_var([2], 1.5, 'float32', persistable=True, name='gv')
    >>> v.tolist(), v.persistable
    ([1.5, 1.5], True)
    """
    dims = [int(d) for d in ([shape] if isinstance(shape, int) else shape)]
    if any(d < 0 for d in dims):
        raise ValueError(f"create_global_var: shape must have non-negative dims, got {dims}")
    t = Tensor(np.full(dims, value, dtype=convert_dtype(dtype).np), name=name)
    t.persistable = bool(persistable)
    return t
