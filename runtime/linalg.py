"""`rt.linalg`: Paddle's `paddle.linalg` namespace (the ops live in `runtime/ops/matrix.py`,
`factorizations.py` and `matrix_products.py`).

>>> import runtime as rt
>>> a = rt.to_tensor([[4.0, 7.0], [2.0, 6.0]])
>>> rt.linalg.norm(rt.linalg.inv(a) @ a - rt.eye(2)).item() < 1e-6
True
"""
from __future__ import annotations

from .ops.factorizations import cholesky, det, slogdet, solve
from .ops.linalg import matmul
from .ops.matrix import inv, svdvals
from .ops.matrix import linalg_norm as norm
from .ops.matrix_products import cross, matrix_power, multi_dot

__all__ = ["cholesky", "cross", "det", "inv", "matmul", "matrix_power", "multi_dot", "norm",
           "slogdet", "solve", "svdvals"]
