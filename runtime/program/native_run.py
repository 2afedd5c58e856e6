"""Calling the C function of a fused run (`native_build.py` compiles it): the run's inputs
made contiguous (broadcast ones expanded to a row), its outputs allocated, its rows split
over the threads of `native_pool.py`, and a floating-point exception NumPy would report
handed back to the NumPy code.
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import native_build, native_pool


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

    def run(*inputs):
        fn = holder.fn
        if fn is None:
            native_build.count("numpy_calls")
            return None
        arrays = [contiguous(a, dt) for a in inputs]
        for k, shape in expand:
            arrays[k] = _expanded(arrays[k], shape)
        rows = known_rows if known_rows != -1 else arrays[row_input].shape[0]
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
