"""`rt.tile` with repeat counts known only when the program runs (int tensors in
`repeat_times`, e.g. read from `rt.shape(y)` in converted code), composed from
unsqueeze + expand + reshape so that it differentiates like `tile` itself."""
from __future__ import annotations

from .combine import stack
from .creation import full, is_tensor
from .math import cast, multiply
from .shape import expand, reshape, shape, unsqueeze


def tile_dynamic(x, repeat_times):
    """`tile(x, repeat_times)` where entries of `repeat_times` may be int tensors."""
    if is_tensor(repeat_times):
        reps = [repeat_times[i] for i in range(repeat_times.shape[0])]
    else:
        reps = list(repeat_times)
    n = max(len(x.shape), len(reps))
    reps = [1] * (n - len(reps)) + reps
    reps = [cast(reshape(r, []), "int64") if is_tensor(r) else full([], int(r), "int64")
            for r in reps]
    x = reshape(x, [1] * (n - len(x.shape)) + [0] * len(x.shape)) if len(x.shape) < n else x
    dims = shape(x)
    y = x
    for i in range(n):  # [d0, d1] -> [1, d0, 1, d1]
        y = unsqueeze(y, 2 * i)
    y = expand(y, [d for i in range(n) for d in (reps[i], -1)])
    return reshape(y, multiply(cast(dims, "int64"), stack(reps)))
