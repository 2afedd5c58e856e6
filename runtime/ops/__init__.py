"""Every op, defined once (see `registry.py`). Importing this package registers them all.

The modules, one family each: `math` (elementwise arithmetic and math, matmul), `linalg`
(einsum, bmm, dot), `reduce` (reductions), `logic` (comparisons, logical ops, where), `shape`
(reshape, concat, gather, ...),
`index` (getitem / setitem), `creation` (zeros, arange, ...), `random` (seeded generators), `nn`
(activations, softmax, dropout, linear), `nn_conv`, `nn_pool`, `nn_norm` (`nn_batch_norm_relu`:
BatchNorm and ReLU as one op), `nn_loss`,
`optim` (optimizer update rules), `optim_adagrad_adamax_lamb` (those three's), `arrays`
(tensor arrays: lists grown inside static loops; `array_joins`: their `a + b`),
`compositions` (Paddle names composed of other ops), `matrix` (diag, inv, svdvals, matrix
norms), `counting` (nonzero, unique, bincount, searchsorted), `cumulative` (cumprod),
`order_stats` (quantile, median), `sampling` (multinomial), `scatter_update` (put_along_axis,
scatter_nd_add), `placement` (Tensor.to / cpu), `inplace_methods` (`x.add_(y)`, `w.zero_()`),
`diagonals` (diagonal, trace), `nan_aware` (nansum, nanmean, nan_to_num), `axis_steps` (diff,
repeat_interleave, index_add), `tensor_queries` (`x.dim()`, is_floating_point: Python values),
`transcendental` (tan, inverse and hyperbolic trigonometry, expm1, trunc, atan2, logit),
`factorizations` (det, slogdet, solve, cholesky), `matrix_products` (mm, mv, multi_dot,
matrix_power, cross).
"""
from . import (
    array_joins,
    array_split,
    arrays,
    axis_steps,
    combine,
    compositions,
    counting,
    creation,
    cumulative,
    diagonals,
    factorizations,
    gather,
    index,
    inplace_methods,
    linalg,
    logic,
    math,
    matrix,
    matrix_products,
    nan_aware,
    nn,
    nn_batch_norm_relu,
    nn_conv,
    nn_ctc,
    nn_gru,
    nn_loss,
    nn_norm,
    nn_pool,
    nn_pool_windows,
    nn_rnn,
    optim,
    optim_adagrad_adamax_lamb,
    order_stats,
    placement,
    random,
    reduce,
    resize_dyn,
    sampling,
    scatter_update,
    sequence,
    shape,
    spectral,
    tensor_queries,
    tiling,
    transcendental,
    unbind,
    yolo,
)
from .registry import OPS, STATE, Meta, OpDef, OpError, OpTypeError, bind, register  # noqa: F401

MODULES = (math, linalg, reduce, logic, shape, combine, gather, index, creation, random, nn,
           nn_conv, nn_pool, nn_norm, nn_loss, optim, optim_adagrad_adamax_lamb, sequence,
           resize_dyn, yolo, unbind, tiling, placement, compositions,
           matrix, counting, cumulative, order_stats, sampling, scatter_update, inplace_methods,
           diagonals, nan_aware, axis_steps, tensor_queries, transcendental, factorizations,
           matrix_products)
