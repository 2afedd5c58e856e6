"""The windows of a pool whose size is known only when the program runs.

`pool_window_index(x, size, stride)` gives, for one axis of x, an int64 [O, K] table: row j
holds the positions of x along that axis that output j pools, and -1 where the window lies in
the padding (or past the end of a shorter adaptive bin). With it, a pool whose kernel (or
adaptive output size) is a value the program computes - the counter of a graph loop - is a
gather and a reduction (`runtime.nn.functional.pooling_run_time`), whose gradient the ops
already have. The table follows the fixed-size ops' geometry (`nn_pool._geometry`, Paddle's
adaptive bins) and raises their errors when the op runs.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import int64
from .nn_pool import _bins, _geometry, check_padding
from .registry import Meta, OpError, bind, register


def _value(op: str, arg: str, v) -> int:
    if v.dtype.kind not in "iu" or v.size != 1:
        raise OpError(f"{op}: {arg} must be an int or a one-value int tensor, got "
                      f"{v.dtype}{list(v.shape)}")
    return int(v.reshape(()))


def _sliding(op, n, k, s, padding, ceil_mode):
    if k < 1 or s < 1:
        raise OpError(f"{op}: kernel_size ({k}) and stride ({s}) must be positive")
    pad4 = padding if isinstance(padding, str) else [*padding, 0, 0]
    check_padding(op, (k, 1), pad4)
    pads, (o, _) = _geometry((n, 1), (k, 1), (s, 1), pad4, ceil_mode)
    if o <= 0:
        raise OpError(f"{op}: kernel {k} does not fit into an axis of size {n} with padding "
                      f"{list(pads[0])}")
    table = np.arange(o).reshape(-1, 1) * s + np.arange(k) - pads[0][0]
    return np.where((table >= 0) & (table < n), table, -1)


def _adaptive(op, n, o):
    if o < 1:
        raise OpError(f"{op}: output_size must be positive, got {o}")
    bins = _bins(n, o)
    table = np.full((o, max(hi - lo for lo, hi in bins)), -1, dtype=np.int64)
    for j, (lo, hi) in enumerate(bins):
        table[j, :hi - lo] = np.arange(lo, hi)
    return table


def _kernel(xp, x, size, stride, pads=None, axis=0, op="pool", padding=(0, 0),
            ceil_mode=False, adaptive=False):
    n = x.shape[axis]
    if pads is not None:  # (before, after) computed by the program
        padding = tuple(_value(op, "padding", p) for p in pads)
        if min(padding) < 0:
            raise OpError(f"{op}: padding must not be negative, got {list(padding)}")
    if adaptive:
        table = _adaptive(op, n, _value(op, "output_size", size))
    else:
        k, s = _value(op, "kernel_size", size), _value(op, "stride", stride)
        table = _sliding(op, n, k, s, padding, ceil_mode)
    return xp.asarray(table.astype(np.int64))


POOL_WINDOW_INDEX = register(
    "pool_window_index", kernel=_kernel, nondiff=True, amp="keep",
    infer=lambda x, size, stride, pads=None, **a: Meta((-1, -1), int64),
    doc="[O, K] positions along `axis` of x that each output of a pool takes (-1: padding), "
        "for a kernel size or adaptive output size known when the op runs (and `pads`, "
        "(before, after) known then, in place of `padding`).")


def pool_window_index(x, size, stride, axis: int, op: str, padding=(0, 0),
                      ceil_mode: bool = False, adaptive: bool = False, pads=None):
    """The window table of one axis (see the module docstring); `size` and `stride` are
    one-value int tensors, and so are `pads` (before, after) where the padding is computed
    by the program (`padding` is then unused)."""
    attrs = {"axis": axis, "op": op, "padding": padding if isinstance(padding, str) else
             list(padding), "ceil_mode": bool(ceil_mode), "adaptive": bool(adaptive)}
    return bind(POOL_WINDOW_INDEX, (x, size, stride, pads), attrs)
