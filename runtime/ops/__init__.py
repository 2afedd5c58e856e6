"""Every op, defined once (see `registry.py`). Importing this package registers them all.

The modules, one family each: `math` (elementwise arithmetic and math, matmul), `linalg`
(einsum, bmm, dot), `reduce` (reductions), `logic` (comparisons, logical ops, where), `shape`
(reshape, concat, gather, ...),
`index` (getitem / setitem), `creation` (zeros, arange, ...), `random` (seeded generators), `nn`
(activations, softmax, dropout, linear), `nn_conv`, `nn_pool`, `nn_norm`, `nn_loss`,
`optim` (optimizer update rules), `arrays` (tensor arrays: lists grown inside static loops).
"""
from . import (
    arrays,
    combine,
    creation,
    gather,
    index,
    linalg,
    logic,
    math,
    nn,
    nn_conv,
    nn_ctc,
    nn_loss,
    nn_norm,
    nn_pool,
    optim,
    optim_more,
    random,
    reduce,
    resize_dyn,
    sequence,
    shape,
    spectral,
    tiling,
    unbind,
    yolo,
)
from .registry import OPS, STATE, Meta, OpDef, OpError, OpTypeError, bind, register  # noqa: F401

MODULES = (math, linalg, reduce, logic, shape, combine, gather, index, creation, random, nn,
           nn_conv, nn_pool, nn_norm, nn_loss, optim, optim_more, sequence,
           resize_dyn, yolo, unbind, tiling)
