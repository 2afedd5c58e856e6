"""A list on an attribute that a tensor `if` rebinds in several turns of a Python loop
(a streaming encoder's `self.cache = []` on a scene cut, then `self.cache.append(feat)` and
`self.cache = self.cache[-2:]` every frame). The first such `if` makes the attribute's list a
tensor array; the `if` of a later turn found an array there before it, not a list, and was
refused ("self.cache is list in the if branch and a tensor in the else branch"); a local
name converted. The array is rebound like a local's now. Eager vs static vs NumPy over clips
with no cut, one cut and several cuts in one program; the attribute after the call is a
Python list of Tensors as eager leaves it."""
import types

import numpy as np

import d2s
import runtime as rt
from runtime import nn

from tests.d2s.observe_wild.helpers import assert_same_leaves


class StreamingEncoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cache = []
        self.n_cuts = 0

    def forward(self, clip, cut_thr):
        self.cache = []
        self.n_cuts = 0
        outs = []
        for t in range(clip.shape[0]):
            feat = clip[t] * 2.0
            if self.cache and (feat - self.cache[-1]).abs().mean() > cut_thr:
                self.cache = []
                self.n_cuts += 1
            self.cache.append(feat)
            self.cache = self.cache[-2:]
            outs.append(rt.stack(self.cache).mean(0))
        return rt.stack(outs), len(self.cache), self.n_cuts


def encoder_ref(clip, cut_thr):
    cache, outs, cuts = [], [], 0
    for t in range(clip.shape[0]):
        feat = clip[t] * 2.0
        if cache and np.abs(feat - cache[-1]).mean() > cut_thr:
            cache, cuts = [], cuts + 1
        cache = (cache + [feat])[-2:]
        outs.append(np.stack(cache).mean(0))
    return np.stack(outs), len(cache), cuts


def keep_recent(box, xs, thr):
    box.recent = [xs[0]]
    for i in range(1, xs.shape[0]):
        if xs[i].sum() > thr:
            box.recent = []
        box.recent.append(xs[i])
    return rt.stack(box.recent).sum(0), len(box.recent)


def test_a_layer_cache_cleared_under_tensor_ifs_in_several_turns():
    rng = np.random.default_rng(3)
    clip = rng.standard_normal((5, 4)).astype("float32")
    eager, static = StreamingEncoder(), d2s.to_static(StreamingEncoder())
    cuts = set()
    for thr in (100.0, 3.0, 0.0):
        want = eager(rt.to_tensor(clip), thr)
        got = static(rt.to_tensor(clip), thr)
        ref = encoder_ref(clip, thr)
        np.testing.assert_allclose(want[0].numpy(), ref[0], rtol=1e-6)
        assert want[1:] == ref[1:]
        assert_same_leaves(got, want)
        assert_same_leaves(static.cache, eager.cache)
        assert type(static.cache) is list and type(static.n_cuts) is int
        cuts.add(ref[2])
    assert len(cuts) == 3
    assert len(static.forward.program_cache) == 3  # (one per threshold: a Python float)


def test_an_argument_attribute_rebound_under_tensor_ifs_in_several_turns():
    converted = d2s.to_static(keep_recent)
    lengths = set()
    for xs in ([[1.0], [-1.0], [-2.0], [-3.0]], [[1.0], [5.0], [-2.0], [6.0]],
               [[1.0], [5.0], [-6.0], [-7.0]]):
        xs = np.asarray(xs, "float32")
        b_eager, b_static = types.SimpleNamespace(), types.SimpleNamespace()
        want = keep_recent(b_eager, rt.to_tensor(xs), 0.0)
        got = converted(b_static, rt.to_tensor(xs), 0.0)
        last = max([0] + [i for i in range(1, 4) if xs[i].sum() > 0])
        ref = xs[max(last, 0):].sum(0)
        np.testing.assert_allclose(want[0].numpy(), ref)
        assert_same_leaves(got, want)
        assert_same_leaves(b_static.recent, b_eager.recent)
        lengths.add(want[1])
    assert len(lengths) == 3
    assert len(converted.program_cache) == 1
