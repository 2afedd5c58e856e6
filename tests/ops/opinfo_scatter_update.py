"""OpInfos for runtime/ops/scatter_update.py (put_along_axis, scatter_nd_add) and the
sorted-search ops of counting.py (searchsorted, bucketize). The ops whose result lengths
depend on the data (nonzero, unique, bincount) and multinomial are tested in
tests/ops/test_data_dependent.py."""
from __future__ import annotations

import numpy as np
from opinfo import EXEMPT, ErrorSample, OpInfo, Sample, randn

import runtime as rt

_ELSEWHERE = "output length depends on the data (-1 in its infer rule); eager, static and " \
             "NumPy in tests/ops/test_data_dependent.py"
EXEMPT["nonzero"] = _ELSEWHERE
EXEMPT["unique"] = _ELSEWHERE
EXEMPT["bincount"] = _ELSEWHERE
EXEMPT["multinomial"] = ("draws random numbers: distribution, seeding and static runs in "
                         "tests/ops/test_data_dependent.py")


def _put_ref(arr, indices, values, axis, reduce="assign"):
    out = arr.copy()
    values = np.broadcast_to(np.asarray(values, dtype=arr.dtype), indices.shape)
    if reduce == "add":
        grid = list(np.indices(indices.shape, sparse=True))
        grid[axis] = indices
        np.add.at(out, tuple(grid), values)
    else:
        np.put_along_axis(out, indices, values, axis)
    return out


def _put_samples(rng):
    rows = np.array([[2, 0], [1, 3], [0, 1]])
    repeats = np.array([[1, 1, 0], [2, 2, 2]])
    return [Sample((randn(rng, 3, 4), rows, randn(rng, 3, 2)), {"axis": 1}),
            Sample((randn(rng, 3, 4), rows, 1.5), {"axis": 1}),
            Sample((randn(rng, 3, 4), np.array([[2, 0, 1, 1]]), randn(rng, 1, 4)),
                   {"axis": 0}),
            Sample((randn(rng, 2, 3), repeats, randn(rng, 2, 3)), {"axis": 1, "reduce": "add"}),
            Sample((randn(rng, 2, 3), repeats, randn(rng, 2, 1)), {"axis": -1, "reduce": "add"})]


def _nd_ref(x, index, updates):
    out = x.copy()
    np.add.at(out, tuple(index[..., i] for i in range(index.shape[-1])), updates)
    return out


def _nd_samples(rng):
    return [Sample((randn(rng, 4, 3), np.array([[1], [3], [1]]), randn(rng, 3, 3))),
            Sample((randn(rng, 3, 4), np.array([[0, 1], [2, 3], [0, 1]]), randn(rng, 3))),
            Sample((randn(rng, 2, 3, 2), np.array([[[1, 2]], [[0, 0]]]), randn(rng, 2, 1, 2)))]


def _searchsorted_ref(seq, values, out_int32=False, right=False):
    side = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
    return out.astype(np.int32 if out_int32 else np.int64)


def _searchsorted_samples(rng):
    seq = np.sort(randn(rng, 6))
    values = np.concatenate([randn(rng, 4), seq[[1, 4]]])
    batch = np.sort(randn(rng, 2, 5), axis=1)
    return [Sample((seq, values)), Sample((seq, values), {"right": True}),
            Sample((seq, values.reshape(2, 3)), {"out_int32": True}),
            Sample((batch, randn(rng, 2, 3)))]


def _bucketize_samples(rng):
    seq = np.sort(randn(rng, 5))
    return [Sample((randn(rng, 2, 3), seq)), Sample((seq[[0, 2]], seq), {"right": True})]


OPINFOS = [
    OpInfo("put_along_axis", rt.put_along_axis, _put_ref, _put_samples, grad=(0, 2),
           error_samples=[
               ErrorSample((np.zeros((2, 3)), np.array([[1, 1]]), 1.0), {"axis": 1}, ValueError,
                           r"put_along_axis: indices name one position more than once"),
               ErrorSample((np.zeros((2, 3)), np.array([[1]]), 1.0),
                           {"axis": 1, "reduce": "max"}, ValueError,
                           r"put_along_axis: reduce='max' is not supported")]),
    OpInfo("scatter_nd_add", rt.scatter_nd_add, _nd_ref, _nd_samples, grad=(0, 2),
           error_samples=[ErrorSample((np.zeros((3, 2)), np.array([[1]]), np.ones((1, 3))), {},
                                      ValueError, r"scatter_nd_add: updates has shape \[1, 3\]")]),
    OpInfo("searchsorted", rt.searchsorted, _searchsorted_ref, _searchsorted_samples,
           grad=False),
    OpInfo("bucketize", rt.bucketize, lambda x, seq, out_int32=False, right=False:
           _searchsorted_ref(seq, x, out_int32, right), _bucketize_samples, grad=False),
]
