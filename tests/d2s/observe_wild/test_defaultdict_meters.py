"""A per-class meter kept in `defaultdict(int)`s passed to an evaluation step, which adds
`int(...)` counts to them: the first call reads keys that are missing (the defaultdict makes
them as they are read), so the trace read 0 for each; the program then kept using those zeros
on later calls, where the keys hold the counts so far (silently: the meter lost every earlier
batch). A key the trace found missing in a defaultdict is guarded as missing. Eager vs static
vs a NumPy count, the meter compared after every call."""
from collections import defaultdict

import numpy as np

import d2s
import runtime as rt

from .helpers import assert_same_leaves


def eval_batch(logits, labels, meter):
    pred = logits.argmax(-1)
    for c in range(logits.shape[-1]):
        hit = labels == c
        meter["support"][c] += int(hit.sum())
        meter["correct"][c] += int(((pred == c) & hit).sum())
    return {c: meter["correct"][c] / max(meter["support"][c], 1)
            for c in range(logits.shape[-1])}


def test_a_defaultdict_meter_counts_every_batch():
    rng = np.random.default_rng(3)
    batches = [(rng.normal(size=(6, 3)).astype("float32"), rng.integers(0, 3, 6))
               for _ in range(4)]
    meters = {}
    for fn in (eval_batch, d2s.to_static(eval_batch)):
        meter = {"support": defaultdict(int), "correct": defaultdict(int)}
        support, correct = np.zeros(3, int), np.zeros(3, int)
        for lv, yv in batches:
            out = fn(rt.to_tensor(lv), rt.to_tensor(yv), meter)
            pred = lv.argmax(-1)
            support += np.bincount(yv, minlength=3)
            correct += np.bincount(yv[pred == yv], minlength=3)
            assert_same_leaves(out, {c: int(correct[c]) / max(int(support[c]), 1)
                                     for c in range(3)})
            assert {k: dict(v) for k, v in meter.items()} == {
                "support": dict(enumerate(support.tolist())),
                "correct": dict(enumerate(correct.tolist()))}
            assert all(type(v) is defaultdict for v in meter.values())
        meters[fn] = meter
