"""Calling the C function of a fused run (`native_build.py` compiles it): the run's inputs
made contiguous (broadcast ones expanded to a row), its outputs allocated, its rows split
over the threads of `native_pool.py`, and a floating-point exception NumPy would report
handed back to the NumPy code.

An input that arrives as a broadcast of one value (stride 0 on every axis, as the gradient of
`x.sum()` is) is not expanded: the call goes to a variant of the C function that reads it
as one element (`native.scalar_variant`, built on the first such call and kept per set of
such inputs). `sf(x).sum().backward()` of GELU on [2048, 1024] float32 so skips writing
and reading 8 MB of ones (docs/performance.md).
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import native, native_build, native_pool


def _expanded(a, shape):
    """`a` (its axes beyond `shape`'s all 1) broadcast to one contiguous row of `shape`."""
    extra = a.ndim - len(shape)
    return np.ascontiguousarray(np.broadcast_to(a.reshape(a.shape[extra:]) if extra > 0 else a,
                                                shape))


def caller(holder, parallel_rows: int):
    """`run(*inputs)`: the run's outputs computed by its C function, or None when that is
    not ready, failed, or raised a floating-point exception NumPy would report (the caller
    then runs the NumPy code). The rows are split over the threads from `parallel_rows`;
    unknown rows (-1) are those of the run's first row input."""
    plan = holder.plan
    dt, shapes, n_out = plan.dtype, plan.out_shapes, len(plan.outputs)
    empty, array_t = np.empty, ctypes.c_void_p * (len(plan.inputs) + n_out)
    contiguous = np.ascontiguousarray
    known_rows, row_input = plan.rows, plan.row_input
    expand = list(plan.expand.items())
    variants = {}  # positions of the inputs read as one element -> their `Holder` or None
    ndarray = np.ndarray

    def run(*inputs):
        fn = holder.fn
        if fn is None:
            native_build.count("numpy_calls")
            return None
        scalars = tuple(k for k, a in enumerate(inputs) if a.__class__ is ndarray and
                        a.size > 1 and not any(a.strides) and k not in plan.expand)
        if scalars:
            fn, scalars = _variant(holder, variants, scalars)
        arrays = [contiguous(a, dt) if k not in scalars else np.full(1, a.flat[0], dt)
                  for k, a in enumerate(inputs)]
        for k, shape in expand:
            arrays[k] = _expanded(arrays[k], shape)
        rows = known_rows if known_rows != -1 else inputs[row_input].shape[0]
        outs = [empty(s if s[0] != -1 else (rows,) + s[1:], dt) for s in shapes]
        ptrs = array_t(*[a.__array_interface__["data"][0] for a in arrays + outs])
        got = 0
        for flags in native_pool.run_pieces(fn, ptrs, rows, 1,
                                            rows >= parallel_rows):
            got |= flags
        if got < 0 or got & native_build.error_mask():
            native_build.count("numpy_calls")
            return None
        native_build.count("native_calls")
        del arrays
        return outs[0] if n_out == 1 else tuple(outs)

    return run


def _variant(holder, variants: dict, scalars: tuple) -> tuple:
    """(the C function reading inputs `scalars` as one element, `scalars`), or (the run's
    own function, ()) while that variant is not ready or could not be built."""
    if scalars not in variants:
        variants[scalars] = native_build.holder_of(
            native.scalar_variant(holder.plan, set(scalars)), native_build.mode(), holder.exact)
    got = variants[scalars]
    if got is None or got.fn is None:
        return holder.fn, ()
    return got.fn, scalars
