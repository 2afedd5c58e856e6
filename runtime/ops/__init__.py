"""Every op, defined once (see `registry.py`). Importing this package registers them all.

The modules, one family each: `math` (elementwise arithmetic and math, matmul), `reduce`
(reductions), `logic` (comparisons, logical ops, where), `shape` (reshape, concat, gather, ...),
`index` (getitem / setitem), `creation` (zeros, arange, ...), `random` (seeded generators), `nn`
(conv, pooling, softmax, losses, norms, ...), `optim` (optimizer update rules).
"""
from . import (  # noqa: F401
    combine, creation, gather, index, logic, math, nn, optim, random, reduce, shape)
from .registry import OPS, STATE, Meta, OpDef, OpError, OpTypeError, bind, register  # noqa: F401

MODULES = (math, reduce, logic, shape, combine, gather, index, creation, random, nn, optim)
