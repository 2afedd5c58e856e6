"""OpInfos for runtime/ops/shape.py and combine.py: reshape, transpose, concat, split, ...

Gradient helper ops (reshape_as, split_like, tile_grad, pad_grad) get OpInfos of their own,
called directly, so their grad rules (used for double backward) are checked too.
"""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime as rt
from runtime.ops import combine as C
from runtime.ops import shape as S
from runtime.ops import tiling as T


def _reshape_ref(x, shape):
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def _samples(*calls):
    """Samples from (args, kwargs) pairs of shapes: an int tuple becomes a randn array."""
    def build(rng):
        out = []
        for args, kwargs in calls:
            out.append(Sample(tuple(randn(rng, *a) if isinstance(a, tuple) else a
                                    for a in args), kwargs))
        return out
    return build


def _flatten_ref(x, start_axis=0, stop_axis=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_axis % x.ndim, stop_axis % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


def _unsqueeze_ref(x, axis):
    for a in ([axis] if isinstance(axis, int) else axis):
        x = np.expand_dims(x, a if a >= 0 else a + x.ndim + 1)
    return x


def _squeeze_ref(x, axis=None):
    if axis is None:
        return np.squeeze(x)
    axes = tuple(a for a in ([axis] if isinstance(axis, int) else axis) if x.shape[a] == 1)
    return np.squeeze(x, axes)


def _expand_ref(x, shape):
    lead = len(shape) - x.ndim
    shape = [x.shape[i - lead] if d == -1 else d for i, d in enumerate(shape)]
    return np.broadcast_to(x, shape).copy()


_NP_PAD = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_ref(x, pad, mode="constant", value=0.0, data_format="NCHW"):
    pairs = S._pad_pairs(pad, x.ndim, mode, data_format)
    if mode == "constant":
        return np.pad(x, pairs, constant_values=value)
    return np.pad(x, pairs, mode=_NP_PAD[mode])


def _split_ref(x, num_or_sections, axis=0):
    if isinstance(num_or_sections, int):
        return np.split(x, num_or_sections, axis)
    sizes = list(num_or_sections)
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - sum(s for s in sizes if s != -1)
    return np.split(x, np.cumsum(sizes)[:-1], axis)


def _tile_grad_ref(g, x, reps):
    n = max(x.ndim, len(reps))
    xs = (1,) * (n - x.ndim) + x.shape
    reps = (1,) * (n - len(reps)) + tuple(reps)
    inter = [v for p in zip(reps, xs) for v in p]
    return g.reshape(inter).sum(axis=tuple(range(0, 2 * n, 2))).reshape(x.shape)


def _pad_grad_ref(g, x, pad, mode):
    """The adjoint by brute force: grad of sum(pad(x) * g) with respect to x."""
    out = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1.0
        out[i] = np.sum(_pad_ref(e.reshape(x.shape), pad, mode) * g)
    return out.reshape(x.shape)


def _err(args, kwargs, match, exc=ValueError):
    return ErrorSample(args, kwargs, exc, match)


OPINFOS = [
    OpInfo("reshape", rt.reshape, _reshape_ref, _samples(
        (((2, 3, 4), [6, 4]), {}), (((2, 3, 4), [0, -1]), {}), (((2, 3), [-1]), {}),
        (((), [1, 1]), {}), (((6,), [2, 1, 3]), {}), (((2, 3, 4), [4, 0, -1]), {})),
        error_samples=[
            _err((np.ones((2, 3)), [4, 2]), {},
                 r"reshape: cannot reshape x of shape \[2, 3\] \(6 elements\) to \[4, 2\]"),
            _err((np.ones((2, 3)), [-1, -1]), {}, r"reshape: shape \[-1, -1\] has more than"),
            _err((np.ones((2, 3)), [5, -1]), {}, r"reshape: cannot reshape x of shape \[2, 3\]"),
        ]),
    OpInfo("reshape_as", S.reshape_as, lambda x, y: x.reshape(y.shape),
           _samples((((2, 6), (3, 4)), {}), (((4,), (2, 2)), {})), grad=(0,)),
    OpInfo("transpose", rt.transpose, lambda x, perm: np.transpose(x, perm), _samples(
        (((2, 3, 4), [2, 0, 1]), {}), (((2, 3), [1, 0]), {}), (((2, 3, 4), [-1, 0, 1]), {})),
        error_samples=[_err((np.ones((2, 3)), [0, 0]), {},
                            r"transpose: perm \[0, 0\] is not a permutation of the 2 axes of x "
                            r"\(shape \[2, 3\]\)")]),
    OpInfo("concat", lambda a, b, c, axis=0: rt.concat([a, b, c], axis),
           lambda a, b, c, axis=0: np.concatenate([a, b, c], axis), _samples(
               (((2, 3), (1, 3), (4, 3)), {}), (((2, 1), (2, 3), (2, 2)), {"axis": -1}),
               (((2, 0, 3), (2, 2, 3), (2, 1, 3)), {"axis": 1})),
           error_samples=[
               _err((np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 3))), {},
                    r"concat: x\[1\] has shape \[2, 4\] but x\[0\] has shape \[2, 3\]; "
                    r"dim 1 differs"),
               _err((np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3))), {"axis": 2},
                    r"concat: axis=2 is out of range for a tensor of rank 2"),
               _err((np.ones(3), np.ones(3, dtype=np.int64), np.ones(3)), {},
                    r"concat: all inputs must have the same dtype, but x\[0\] is float64 and "
                    r"x\[1\] is int64", TypeError),
           ]),
    OpInfo("split_like", lambda g, a, b: C.split_like(g, [a, b], 1),
           lambda g, a, b: np.split(g, [a.shape[1]], 1),
           _samples((((2, 5), (2, 2), (2, 3)), {})), grad=(0,)),
    OpInfo("stack", lambda a, b, axis=0: rt.stack([a, b], axis),
           lambda a, b, axis=0: np.stack([a, b], axis),
           _samples((((2, 3), (2, 3)), {}), (((2, 3), (2, 3)), {"axis": -1}),
                    (((), ()), {})),
           covers=("unstack",),
           error_samples=[_err((np.ones((2, 3)), np.ones((3, 2))), {},
                               r"stack: x\[1\] has shape \[3, 2\] but x\[0\] has shape \[2, 3\]")]),
    OpInfo("unstack", rt.unstack, lambda x, axis=0: list(np.moveaxis(x, axis, 0)),
           _samples((((3, 2),), {}), (((2, 3, 2),), {"axis": 1}))),
    OpInfo("split", rt.split, _split_ref, _samples(
        (((6, 2), 3), {}), (((2, 7), [2, -1, 1]), {"axis": 1}), (((4, 3), [1, 3]), {}),
        (((2, 4), 1), {"axis": -1})),
        error_samples=[
            _err((np.ones((5, 2)), 2), {},
                 r"split: axis 0 of x \(shape \[5, 2\]\) has size 5, which is not divisible by 2"),
            _err((np.ones((5, 2)), [2, 2]), {},
                 r"split: sections \[2, 2\] sum to 4, but axis 0 of x \(shape \[5, 2\]\)"),
        ]),
    OpInfo("squeeze", rt.squeeze, _squeeze_ref, _samples(
        (((2, 1, 3, 1),), {}), (((2, 1, 3, 1),), {"axis": 1}), (((1, 3),), {"axis": [0, 1]}),
        (((1,),), {}), (((2, 1),), {"axis": -1})),
        error_samples=[_err((np.ones((2, 1)),), {"axis": 3},
                            r"squeeze: axis=3 is out of range for a tensor of rank 2")]),
    OpInfo("unsqueeze", rt.unsqueeze, _unsqueeze_ref, _samples(
        (((3,), 0), {}), (((3,), [0, 2]), {}), (((2, 3), -1), {}), (((), 0), {})),
        error_samples=[_err((np.ones((2, 3)), 4), {},
                            r"unsqueeze: axis 4 is out of range for inserting into shape "
                            r"\[2, 3\]")]),
    OpInfo("flatten", rt.flatten, _flatten_ref, _samples(
        (((2, 3, 4),), {}), (((2, 3, 4),), {"start_axis": 1}),
        (((2, 3, 4, 5),), {"start_axis": 1, "stop_axis": 2}), (((),), {})),
        error_samples=[_err((np.ones((2, 3, 4)),), {"start_axis": 2, "stop_axis": 1},
                            r"flatten: start_axis 2 is after stop_axis 1 for x of shape "
                            r"\[2, 3, 4\]")]),
    OpInfo("expand", rt.expand, _expand_ref, _samples(
        (((3, 1), [2, 3, 4]), {}), (((3, 1), [-1, 5]), {}), (((), [2, 2]), {}),
        (((1, 2), [2, 3, -1]), {})),
        covers=("sum_to_like",),
        error_samples=[_err((np.ones((2, 3)), [4, 3]), {},
                            r"expand: cannot expand x of shape \[2, 3\] to \[4, 3\]: dim 0 of x "
                            r"is 2, which is neither 1 nor 4")]),
    OpInfo("tile", rt.tile, np.tile, _samples(
        (((2, 3), [2, 1]), {}), (((2, 3), [2]), {}), (((3,), [2, 2]), {}), (((2,), [0]), {})),
        error_samples=[_err((np.ones((2, 3)), [-1]), {},
                            r"tile: repeat_times \[-1\] must be non-negative ints")]),
    OpInfo("tile_grad", lambda g, x, reps: T._tile_grad(g, x, reps), _tile_grad_ref,
           _samples((((4, 3), (2, 3), [2, 1]), {}), (((2, 2, 3), (3,), [2, 2, 1]), {})),
           grad=(0,)),
    OpInfo("flip", rt.flip, lambda x, axis: np.flip(x, axis), _samples(
        (((2, 3), 0), {}), (((2, 3, 4), [0, 2]), {}), (((3,), -1), {})),
        error_samples=[_err((np.ones((2, 3)), 2), {},
                            r"flip: axis=2 is out of range for a tensor of rank 2")]),
    OpInfo("roll", rt.roll, lambda x, shifts, axis=None: np.roll(x, shifts, axis), _samples(
        (((2, 3), 1), {}), (((2, 3), [1, -2]), {"axis": [0, 1]}), (((4,), 5), {"axis": 0})),
        error_samples=[_err((np.ones((2, 3)), [1, 2]), {"axis": 0},
                            r"roll: shifts \[1, 2\] and axis \(0,\) must have the same length")]),
    OpInfo("pad", rt.pad, _pad_ref, _samples(
        (((1, 2, 3, 4), [1, 2, 0, 1]), {}),
        (((2, 3), [1, 0, 2, 1]), {"value": 1.5}),
        (((1, 2, 4, 4), [1, 2, 2, 1]), {"mode": "reflect"}),
        (((1, 2, 2), [3, 2]), {"mode": "reflect"}),
        (((1, 2, 3, 3), [1, 2, 0, 1]), {"mode": "replicate"}),
        (((1, 3, 4), [2, 1]), {"mode": "circular"}),
        (((1, 4, 4, 2), [1, 0, 2, 1]), {"mode": "reflect", "data_format": "NHWC"})),
        error_samples=[
            _err((np.ones((1, 1, 2, 2)), [2, -1, 0, 0]), {"mode": "reflect"},
                 r"pad: negative padding \[2, -1\] on axis 3 of x \(shape \[1, 1, 2, 2\]\)"),
            _err((np.ones((2, 2)), [1, 1]), {"mode": "wrong"}, r"pad: mode must be one of")]),
    OpInfo("pad_grad", lambda g, x, pad, mode: S._pad_grad(
        g, x, {"paddings": S._pad_pairs(pad, x.ndim, mode, "NCHW"), "mode": mode}),
        _pad_grad_ref, _samples(
            (((1, 2, 3, 6), (1, 2, 3, 3), [1, 2, 0, 0], "reflect"), {}),
            (((1, 1, 4, 5), (1, 1, 3, 3), [2, 0, 1, 0], "replicate"), {}),
            (((1, 2, 6), (1, 2, 3), [2, 1], "circular"), {}),
            (((2, 5), (2, 3), [1, 1], "constant"), {})),
        grad=(0,)),
    OpInfo("shape", rt.shape, lambda x: np.array(x.shape, dtype=np.int64),
           _samples((((2, 3),), {}), (((),), {})), grad=False),
    OpInfo("numel", rt.numel, lambda x: np.array(x.size, dtype=np.int64),
           _samples((((2, 3),), {}), (((),), {})), grad=False),
]

