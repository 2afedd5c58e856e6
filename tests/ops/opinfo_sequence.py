"""OpInfos for the sequence helpers (runtime/ops/sequence.py, runtime/nn/functional/
sequence.py), softsign, increment and add_n. The CRF references enumerate every tag path
(small sizes), independent of the forward algorithm and Viterbi the runtime uses."""
from __future__ import annotations

import itertools

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn, unary_samples

import runtime as rt
import runtime.nn.functional as F


def _softsign_ref(x):
    return x / (1 + np.abs(x))


def _label_smooth_ref(label, prior_dist=None, epsilon=0.1):
    prior = 1.0 / label.shape[-1] if prior_dist is None else prior_dist
    return (1 - epsilon) * label + epsilon * prior


def _label_smooth_samples(rng):
    onehot = np.eye(4)[rng.integers(0, 4, size=3)]
    return [Sample((onehot,)), Sample((randn(rng, 2, 3, 5),), {"epsilon": 0.3}),
            Sample((onehot, rng.uniform(0, 1, size=(1, 4))), {"epsilon": 0.2})]


def _sequence_mask_ref(x, maxlen=None, dtype="int64"):
    maxlen = int(x.max()) if maxlen is None else maxlen
    return (np.arange(maxlen) < x[..., None]).astype(dtype)


def _sequence_mask_samples(rng):
    return [Sample((np.array([1, 3, 0, 2]),), {"maxlen": 4}),
            Sample((np.array([[2, 5], [1, 1]]),), {"maxlen": 6, "dtype": "float32"}),
            Sample((np.array([4, 2, 3]),))]


def _gather_tree_ref(ids, parents):
    steps, batch, beam = ids.shape
    out = np.zeros_like(ids)
    for b in range(batch):
        for k in range(beam):
            parent = k
            for t in range(steps - 1, -1, -1):
                out[t, b, k] = ids[t, b, parent]
                parent = parents[t, b, parent]
    return out


def _gather_tree_samples(rng):
    return [Sample((rng.integers(0, 9, size=(4, 2, 3)), rng.integers(0, 3, size=(4, 2, 3)))),
            Sample((rng.integers(0, 9, size=(1, 3, 2)).astype("int32"),
                    rng.integers(0, 2, size=(1, 3, 2)).astype("int32")))]


def _path_score(em, trans, path):
    s = trans[0, path[0]] + trans[1, path[-1]] + sum(em[t, p] for t, p in enumerate(path))
    return s + sum(trans[2 + a, b] for a, b in zip(path, path[1:]))


def _crf_ref(input, label, transition, length=None):
    batch, steps, tags = input.shape
    lengths = [steps] * batch if length is None else np.reshape(length, -1)
    out = []
    for b in range(batch):
        n = int(lengths[b])
        scores = [_path_score(input[b], transition, p)
                  for p in itertools.product(range(tags), repeat=n)]
        log_z = np.logaddexp.reduce(scores)
        out.append(log_z - _path_score(input[b], transition, list(label[b, :n])))
    return np.asarray(out, dtype=input.dtype)[:, None]


def _crf_samples(rng):
    return [Sample((randn(rng, 2, 3, 3), rng.integers(0, 3, size=(2, 3)), randn(rng, 5, 3))),
            Sample((randn(rng, 3, 4, 2), rng.integers(0, 2, size=(3, 4)), randn(rng, 4, 2)),
                   {"length": np.array([4, 2, 1])})]


def _decode_ref(input, transition, label=None, length=None):
    batch, steps, tags = input.shape
    lengths = [steps] * batch if length is None else np.reshape(length, -1)
    out = np.zeros((batch, steps), "int64")
    for b in range(batch):
        n = int(lengths[b])
        best = max(itertools.product(range(tags), repeat=n),
                   key=lambda p: _path_score(input[b], transition, p))
        out[b, :n] = best
        if label is not None:
            out[b, :n] = np.asarray(best) == label[b, :n]
    return out


def _decode_samples(rng):
    return [Sample((randn(rng, 2, 3, 3), randn(rng, 5, 3))),
            Sample((randn(rng, 3, 4, 2), randn(rng, 4, 2)), {"length": np.array([4, 2, 1])}),
            Sample((randn(rng, 2, 3, 3), randn(rng, 5, 3)),
                   {"label": rng.integers(0, 3, size=(2, 3)), "length": np.array([[3], [2]])})]


def _increment_fn(x, value=1.0):
    out = rt.increment(x, value)
    assert out is x
    return x


def _add_n_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 3, 4))),
            Sample((randn(rng, 5),))]


def _add_n_fn(*inputs):  # the list is built from separate arguments so each gets a gradient
    return rt.add_n(list(inputs))


def _add_n_ref(*inputs):
    return np.sum(np.stack(inputs), axis=0)


OPINFOS = [
    OpInfo("softsign", F.softsign, _softsign_ref, unary_samples()),
    OpInfo("label_smooth", F.label_smooth, _label_smooth_ref, _label_smooth_samples,
           error_samples=[ErrorSample((np.ones((2, 3)),), {"epsilon": 1.5}, ValueError,
                                      r"label_smooth: epsilon must be in \[0, 1\], got 1.5")]),
    OpInfo("sequence_mask", F.sequence_mask, _sequence_mask_ref, _sequence_mask_samples,
           grad=False),
    OpInfo("gather_tree", F.gather_tree, _gather_tree_ref, _gather_tree_samples, grad=False,
           error_samples=[ErrorSample((np.zeros((2, 3), "int64"), np.zeros((2, 3), "int64")),
                                      {}, ValueError, r"gather_tree: ids must be 3-D"),
                          ErrorSample((np.zeros((2, 1, 3), "int64"),
                                       np.zeros((2, 1, 2), "int64")), {}, ValueError,
                                      r"gather_tree: ids has shape \[2, 1, 3\] but parents "
                                      r"has shape \[2, 1, 2\]")]),
    OpInfo("linear_chain_crf", F.linear_chain_crf, _crf_ref, _crf_samples, grad=(0, 2),
           grad_tol=1e-5,
           error_samples=[ErrorSample((np.ones((1, 2, 3)), np.zeros((1, 2), "int64"),
                                       np.ones((3, 3))), {}, ValueError,
                                      r"linear_chain_crf: transition must have shape "
                                      r"\[num_tags \+ 2, num_tags\] = \[5, 3\], got \[3, 3\]")]),
    OpInfo("crf_decoding", F.crf_decoding, _decode_ref, _decode_samples, grad=False,
           error_samples=[ErrorSample((np.ones((1, 2, 3)), np.ones((3, 3))), {}, ValueError,
                                      r"crf_decoding: transition must have shape "
                                      r"\[num_tags \+ 2, num_tags\] = \[5, 3\], got \[3, 3\]")]),
    OpInfo("increment", _increment_fn, lambda x, value=1.0: x + value, grad=False,
           samples=lambda rng: [Sample((randn(rng, 1),)), Sample((randn(rng),), {"value": 2.5}),
                                Sample((np.array([3]),), {"value": 2})],
           error_samples=[ErrorSample((np.ones(3),), {}, ValueError,
                                      r"increment: x must have exactly one element, got shape "
                                      r"\[3\]")]),
    OpInfo("add_n", _add_n_fn, _add_n_ref, _add_n_samples),
]


def _accuracy_ref(input, label, k=1):
    top = np.argsort(-input, axis=-1, kind="stable")[:, :k]
    return np.float32(np.mean(np.any(top == label.reshape(-1, 1), axis=-1)))


def _accuracy_samples(rng):
    return [Sample((rng.permutation(20).reshape(5, 4).astype(float), rng.integers(0, 4, (5, 1)))),
            Sample((rng.permutation(18).reshape(6, 3).astype(float), rng.integers(0, 3, 6)),
                   {"k": 2})]


OPINFOS.append(OpInfo("accuracy", rt.metric.accuracy, _accuracy_ref, _accuracy_samples,
                      grad=False,
                      error_samples=[ErrorSample((np.ones((2, 3)), np.zeros((2, 1), "int64")),
                                                 {"k": 0}, ValueError,
                                                 r"accuracy: k must be >= 1, got 0")]))

# Bound only while a program is built (eager code passes numbers); tested against eager and
# finite differences in tests/breadth/test_dynamic_shapes.py.
EXEMPT = {"resize2d_dyn": "static-only (size known at run time); tests/breadth/"
                          "test_dynamic_shapes.py checks values and gradients",
          "resize2d_dyn_grad": "the adjoint of resize2d_dyn, checked through its gradients"}


def _unbind_ref(x, axis=0):
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


OPINFOS += [
    OpInfo("unbind", rt.unbind, _unbind_ref,
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 2),), {"axis": 1}),
                        Sample((randn(rng, 2, 3),), {"axis": -1})],
           error_samples=[ErrorSample((np.ones((2, 3)),), {"axis": 2}, ValueError,
                                      r"unbind: axis=2 is out of range for a tensor of rank 2")]),
    OpInfo("rank", rt.rank, lambda x: np.asarray(x.ndim, "int32"), grad=False,
           samples=lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng),))]),
]
