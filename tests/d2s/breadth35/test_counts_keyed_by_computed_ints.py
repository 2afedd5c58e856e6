"""Counts in a dict keyed by ints the program computes, over a key domain known while
tracing (issue 35): `counts = {e: 0 for e in range(E)}` then `counts[int(experts[i, j])]
+= 1` (a DeepSpeed-style per-expert capacity counter), `hist[int(labels[i])] += 1` in a
loop over `range()` of a tensor, tensor sums per class. Reading `counts[k]` and `counts[k]
+= v` with a computed `k` pick the item whose Python key equals it (`computed_keys.
get_item` / `aug_item`); the dict keeps its Python keys, and the call returns Python numbers
where eager code has them. A key none of the dict's keys equals raises KeyError when the
program runs; keys that are new (`.get(k, 0) + 1` on an empty dict) stay refused at the
line. Eager vs static vs a NumPy reference, over inputs taking different paths."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from d2s.errors import ConversionError

from .messages import assert_at_user_line
from .test_dict_keys_in_graph_loops import line_of


def route(logits, capacity):
    """Top-2 routing with per-expert counters in a Python dict (tokens dropped when their
    expert is full); the counters come back as Python ints."""
    weights, experts = rt.topk(F.softmax(logits, axis=-1), 2)
    tokens_per_expert = {e: 0 for e in range(logits.shape[1])}
    keep = []
    for i in range(logits.shape[0]):
        row = []
        for j in range(2):
            e = int(experts[i, j])
            if tokens_per_expert[e] < capacity:
                tokens_per_expert[e] += 1
                row.append(weights[i, j])
            else:
                row.append(rt.zeros([]))
        keep.append(rt.stack(row))
    return rt.stack(keep), tokens_per_expert, tokens_per_expert[0]


def route_ref(logits, capacity):
    z = np.exp(logits - logits.max(-1, keepdims=True))
    p = z / z.sum(-1, keepdims=True)
    experts = np.argsort(-p, axis=-1, kind="stable")[:, :2]
    counts = {e: 0 for e in range(logits.shape[1])}
    keep = np.zeros((logits.shape[0], 2), "float32")
    for i in range(logits.shape[0]):
        for j in range(2):
            e = int(experts[i, j])
            if counts[e] < capacity:
                counts[e] += 1
                keep[i, j] = p[i, experts[i, j]]
    return keep, counts, counts[0]


def test_per_expert_counters_follow_the_run():
    rng = np.random.default_rng(0)
    static = d2s.to_static(route)
    for _ in range(4):
        logits = rng.normal(size=(6, 4)).astype("float32")
        x = rt.to_tensor(logits)
        eager, got, ref = route(x, 2), static(x, 2), route_ref(logits, 2)
        for out in (eager, got):
            np.testing.assert_allclose(out[0].numpy(), ref[0], rtol=1e-5, atol=1e-6)
            assert out[1] == ref[1] and list(out[1]) == list(ref[1])
            assert all(type(v) is int for v in out[1].values()), out[1]
            assert type(out[2]) is int and out[2] == ref[2]
    assert len(static.program_cache) == 1


def histogram(labels, n, feats):
    """Counts and tensor sums per class over the first `n` (a tensor) labels."""
    counts = {c: 0 for c in range(3)}
    sums = {c: rt.zeros([2]) for c in range(3)}
    for i in range(n):
        c = int(labels[i])
        counts[c] += 1
        sums[c] += feats[i]
    return counts, sums


def histogram_ref(labels, n, feats):
    counts = {c: 0 for c in range(3)}
    sums = {c: np.zeros(2, "float32") for c in range(3)}
    for i in range(n):
        counts[int(labels[i])] += 1
        sums[int(labels[i])] = sums[int(labels[i])] + feats[i]
    return counts, sums


@pytest.mark.parametrize("labels", [[0, 1, 1, 2], [2, 2, 0, 0]])
def test_counts_in_a_graph_loop(labels):
    feats = np.arange(8, dtype="float32").reshape(4, 2)
    static = d2s.to_static(histogram)
    for n in (0, 3, 4):
        args = (rt.to_tensor(np.array(labels, "int64")), rt.to_tensor(n), rt.to_tensor(feats))
        ref = histogram_ref(labels, n, feats)
        for counts, sums in (histogram(*args), static(*args)):
            assert counts == ref[0] and all(type(v) is int for v in counts.values())
            assert list(sums) == list(ref[1])
            for k in sums:
                np.testing.assert_allclose(sums[k].numpy(), ref[1][k])
    assert len(static.program_cache) == 1


def test_a_key_none_of_the_dict_keys_equals_raises_keyerror_when_run():
    static = d2s.to_static(histogram)
    args = (rt.to_tensor(np.array([0, 5], "int64")), rt.to_tensor(2), rt.to_tensor(
        np.zeros((2, 2), "float32")))
    with pytest.raises(KeyError) as eager:
        histogram(*args)
    with pytest.raises(KeyError) as info:
        static(*args)
    assert info.value.args == eager.value.args == (5,)  # (eager's: the run's key)


def new_keys(labels):
    counts = {}
    for i in range(labels.shape[0]):
        c = int(labels[i])
        counts[c] = counts.get(c, 0) + 1
    return counts


def test_new_keys_stay_refused_at_the_line():
    labels = rt.to_tensor(np.array([1, 2, 1], "int64"))
    assert new_keys(labels) == {1: 2, 2: 1}
    with pytest.raises(ConversionError) as info:
        d2s.to_static(new_keys)(labels)
    assert_at_user_line(info.value, __file__,
                        line_of(new_keys, "counts[c] = counts.get(c, 0) + 1"))
