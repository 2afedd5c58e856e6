"""OpInfos for runtime/ops/index.py and gather.py: getitem, setitem, gather, scatter, sort, ...

An index template is a tuple whose ('T', k) entries stand for the k-th index argument after x
(a NumPy int array, so it reaches the op as an int tensor); everything else is a plain index.
Gradient helper ops get OpInfos of their own so their grad rules (double backward) are checked.
"""
from __future__ import annotations

import numpy as np
from opinfo import EXEMPT, ErrorSample, OpInfo, Sample, randn

import runtime as rt
from runtime.ops import gather as G
from runtime.ops import index as X
from runtime.ops.registry import bind

EXEMPT["masked_select"] = ("output length depends on the data (-1 in its infer rule); values, "
                           "grads and errors in tests/test_indexing.py")
EXEMPT["masked_select_grad"] = "the grad of masked_select; checked in tests/test_indexing.py"


def _fill(index, ts):
    return tuple(ts[i[1]] if isinstance(i, tuple) and i and i[0] == "T" else i for i in index)


def _getitem(x, *ts, index):
    return x[_fill(index, ts)]


def _setitem(x, v, *ts, index):
    spec, tensors = X.parse_index(_fill(index, ts))
    return bind(X.SETITEM, (x, v, *tensors), {"index": spec})


def _setitem_ref(x, v, *ts, index):
    out = x.copy()
    out[_fill(index, ts)] = v
    return out


def _getitem_grad(g, x, *ts, index):
    spec, tensors = X.parse_index(_fill(index, ts))
    return bind(X.GETITEM_GRAD, (g, x, *tensors), {"index": spec})


def _getitem_grad_ref(g, x, *ts, index):
    out = np.zeros_like(x)
    np.add.at(out, _fill(index, ts), g)
    return out


S_ = slice
_I = np.array
_GETITEM_CASES = [
    ((3, 4), (), (1,)), ((3, 4), (), (-1, S_(None, None, -1))), ((3, 4, 5), (), (Ellipsis, 2)),
    ((3, 4), (), (None, S_(1, 3), None)), ((3, 4), (_I([2, 0, 2]),), (("T", 0),)),
    ((3, 4, 5), (_I([0, 2]), _I([1, 3])), (("T", 0), S_(None), ("T", 1))),
    ((3, 4, 5), (_I([[0, 1], [1, 0]]),), (S_(None), ("T", 0), 0)),
    ((3, 4), (), ([True, False, True],)), ((3, 4), (), (S_(None), [0, 0, 3])),
    ((2, 3), (), ()), ((3, 4, 5), (_I(1),), (("T", 0), S_(None, None, 2))),
]


def _getitem_samples(rng):
    return [Sample((randn(rng, *shape), *ts), {"index": index})
            for shape, ts, index in _GETITEM_CASES]


def _getitem_grad_samples(rng):
    out = []
    for shape, ts, index in _GETITEM_CASES:
        ref = np.zeros(shape)[_fill(index, ts)]
        out.append(Sample((randn(rng, *ref.shape), randn(rng, *shape), *ts), {"index": index}))
    return out


def _setitem_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 4)), {"index": (1,)}),
        Sample((randn(rng, 3, 4), 2.5), {"index": (S_(None), S_(None, None, -2))}),
        Sample((randn(rng, 3, 4), randn(rng, 2, 1)), {"index": (S_(1, None), S_(0, 2))}),
        Sample((randn(rng, 3, 4), randn(rng, 2), _I([0, 2]), _I([3, 1])),
               {"index": (("T", 0), ("T", 1))}),
        Sample((randn(rng, 3, 4), randn(rng, 1, 4)), {"index": (Ellipsis, None, 0, S_(None))}),
        Sample((randn(rng, 2, 3), randn(rng, 1, 3)), {"index": (0,)}),
    ]


def _along_samples(rng):
    return [Sample((randn(rng, 3, 4), rng.integers(0, 4, (3, 5)), 1)),
            Sample((randn(rng, 3, 4), rng.integers(0, 3, (2, 4)), 0))]


def _along_grad_ref(g, x, idx, axis):
    out = np.zeros_like(x)
    grid = list(np.ix_(*[np.arange(n) for n in idx.shape]))
    grid[axis] = idx
    np.add.at(out, tuple(grid), g)
    return out


def _gather_grad_ref(g, x, index, axis=0):
    out = np.zeros_like(x)
    np.add.at(out, (slice(None),) * axis + (index,), g)
    return out


def _gather_nd_ref(x, index):
    return x[tuple(np.moveaxis(index, -1, 0))]


def _gather_nd_grad_ref(g, x, index):
    out = np.zeros_like(x)
    np.add.at(out, tuple(np.moveaxis(index, -1, 0)), g)
    return out


def _scatter_ref(x, index, updates, overwrite=True):
    out = x.copy()
    if overwrite:
        out[index] = updates
    else:
        out[index] = 0
        np.add.at(out, index, updates)
    return out


def _sort_ref(x, axis=-1, descending=False):
    idx = np.argsort(x, axis=axis, kind="stable")
    idx = np.flip(idx, axis) if descending else idx
    return np.take_along_axis(x, idx, axis)


def _argsort_ref(x, axis=-1, descending=False):
    idx = np.argsort(x, axis=axis, kind="stable")
    return np.flip(idx, axis) if descending else idx


def _topk_ref(x, k, axis=-1, largest=True):
    idx = _argsort_ref(x, axis, largest)
    idx = np.take(idx, np.arange(k), axis=axis)
    return [np.take_along_axis(x, idx, axis), idx]


def _distinct(rng, *shape):
    """Values with no ties (so sort orders, and their finite differences, are unambiguous)."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.5 + rng.uniform(
        0, 0.1, shape)


def _err(args, kwargs, match, exc=ValueError):
    return ErrorSample(args, kwargs, exc, match)


_X34 = np.ones((3, 4))

OPINFOS = [
    OpInfo("getitem", _getitem, _getitem, _getitem_samples, error_samples=[
        _err((_X34,), {"index": (5,)},
             r"getitem: index 5 is out of range for axis 0 with size 3 \(x shape \[3, 4\]\)",
             IndexError),
        _err((_X34,), {"index": (0, 0, 0)},
             r"getitem: too many indices for x of shape \[3, 4\]: 3 dims indexed", IndexError),
        _err((_X34, np.ones(2)), {"index": (("T", 0),)},
             r"getitem: index tensors must be int or bool, got float64", TypeError),
        _err((_X34,), {"index": ([True, False],)},
             r"getitem: a bool mask of shape \[2\] does not match dims \[3\]", IndexError),
    ]),
    OpInfo("getitem_grad", _getitem_grad, _getitem_grad_ref, _getitem_grad_samples, grad=(0,)),
    OpInfo("setitem", _setitem, _setitem_ref, _setitem_samples, error_samples=[
        _err((_X34, np.ones(3)), {"index": (0,)},
             r"setitem: value of shape \[3\] cannot be assigned to the selection of shape \[4\] "
             r"\(x shape \[3, 4\]\)"),
        _err((_X34, 1.0), {"index": (S_(None), 7)},
             r"setitem: index 7 is out of range for axis 1 with size 4", IndexError),
    ]),
    OpInfo("gather", rt.gather, lambda x, i, axis=0: np.take(x, i, axis), lambda rng: [
        Sample((randn(rng, 4, 3), _I([3, 0, 3]))), Sample((randn(rng, 4, 3), _I([2, 1]), 1)),
        Sample((randn(rng, 4, 3), _I(1))), Sample((randn(rng, 2, 3, 2), _I([1, 1]), -2)),
        Sample((randn(rng, 4, 3), _I([[0, 1], [3, 3]]), 0))],
        error_samples=[
            _err((_X34, np.ones(2)), {}, r"gather: index must be an integer tensor, got "
                                         r"float64", TypeError),
            _err((_X34, _I([0])), {"axis": 2}, r"gather: axis=2 is out of range")]),
    OpInfo("gather_grad", lambda g, x, i, axis=0: bind(G.GATHER_GRAD, (g, x, i), {"axis": axis}),
           _gather_grad_ref, lambda rng: [
               Sample((randn(rng, 3, 3), randn(rng, 4, 3), _I([3, 0, 3]))),
               Sample((randn(rng, 4, 2), randn(rng, 4, 3), _I([2, 2]), 1))], grad=(0,)),
    OpInfo("gather_nd", rt.gather_nd, _gather_nd_ref, lambda rng: [
        Sample((randn(rng, 3, 4), _I([[0, 1], [2, 3], [0, 1]]))),
        Sample((randn(rng, 3, 4, 2), _I([[[1], [0]]])))],
        error_samples=[_err((_X34, _I([[0, 1, 2]])), {},
                            r"gather_nd: index has shape \[1, 3\], whose last dim 3 exceeds the "
                            r"rank of x \(shape \[3, 4\]\)")]),
    OpInfo("gather_nd_grad", lambda g, x, i: bind(G.GATHER_ND_GRAD, (g, x, i), {}),
           _gather_nd_grad_ref, lambda rng: [
               Sample((randn(rng, 3), randn(rng, 3, 4), _I([[0, 1], [2, 3], [0, 1]])))],
           grad=(0,)),
    OpInfo("scatter", rt.scatter, _scatter_ref, lambda rng: [
        Sample((randn(rng, 4, 3), _I([3, 0]), randn(rng, 2, 3))),
        Sample((randn(rng, 4, 3), _I([1, 1, 2]), randn(rng, 3, 3)), {"overwrite": False}),
        Sample((randn(rng, 5), _I([4]), randn(rng, 1)))],
        error_samples=[_err((_X34, _I([0, 1]), np.ones((2, 3))), {},
                            r"scatter: updates has shape \[2, 3\] but index has shape \[2\] and x "
                            r"has shape \[3, 4\]; updates must have shape \[2, 4\]")]),
    OpInfo("take_along_axis", rt.take_along_axis,
           lambda x, i, axis: np.take_along_axis(x, i, axis), _along_samples,
           error_samples=[_err((_X34, _I([1, 2]), 0), {},
                               r"take_along_axis: indices has shape \[2\] but x has shape "
                               r"\[3, 4\]; they must have the same rank")]),
    OpInfo("take_along_axis_grad",
           lambda g, x, i, axis: bind(G.TAKE_ALONG_AXIS_GRAD, (g, x, i), {"axis": axis}),
           _along_grad_ref, lambda rng: [
               Sample((randn(rng, 3, 5), randn(rng, 3, 4), rng.integers(0, 4, (3, 5)), 1))],
           grad=(0,)),
    OpInfo("sort", rt.sort, _sort_ref, lambda rng: [
        Sample((_distinct(rng, 3, 4),)), Sample((_distinct(rng, 3, 4),), {"axis": 0}),
        Sample((_distinct(rng, 5),), {"descending": True})],
        error_samples=[_err((_X34,), {"axis": 2}, r"sort: axis=2 is out of range")]),
    OpInfo("argsort", rt.argsort, _argsort_ref, lambda rng: [
        Sample((_distinct(rng, 3, 4),)), Sample((_distinct(rng, 3, 4),), {"descending": True,
                                                                          "axis": 0})],
        grad=False, static=True),
    OpInfo("topk", rt.topk, _topk_ref, lambda rng: [
        Sample((_distinct(rng, 3, 5), 2)), Sample((_distinct(rng, 4, 3), 3), {"axis": 0}),
        Sample((_distinct(rng, 6), 4), {"largest": False})],
        error_samples=[_err((_X34, 5), {},
                            r"topk: k=5 must be between 0 and the size 4 of axis -1 of x "
                            r"\(shape \[3, 4\]\)")]),
    OpInfo("one_hot", rt.one_hot, lambda x, n: np.eye(n, dtype=np.float32)[x], lambda rng: [
        Sample((_I([0, 2, 1]), 3)), Sample((_I([[1], [0]]), 2))], grad=False,
        error_samples=[_err((_I([0, 3]), 3), {}, r"one_hot: x has values in \[0, 3\], outside "
                                                 r"\[0, 3\) for num_classes=3"),
                       _err((np.ones(2), 3), {}, r"one_hot: x must be an integer tensor",
                            TypeError)]),
]
