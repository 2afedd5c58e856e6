"""`self.cache = new` in a converted forward where `cache` is a registered buffer and `new` has
another shape (StreamingLLM's evicting cache, a rotary cache rebuilt for a longer sequence):
the converted call raised `ValueError: set_value: value has shape [3, 2] but the persistable
'const_0' has shape [4, 2]` (an internal name), or after the call `StateChangeError: ... a
tensor kept on an object must keep its shape`. Eager code rebinds the buffer; converted code
now does too: the buffer holds eager's tensor after each call, and a call that reads the
buffer at its new shape runs a program made for that shape (corpus case
wild3_llm.StreamingKVCacheWithEviction)."""
import numpy as np

import d2s
import runtime as rt
from runtime import nn


class EvictingCache(nn.Layer):
    """Appends the new rows, keeps the last `budget`, halves them when their sum is positive
    (a tensor condition)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", rt.zeros([0, 2]))

    def forward(self, rows, budget):
        cache = rt.concat([self.cache, rows], axis=0)
        if cache.shape[0] > budget:
            cache = cache[-budget:]
        if cache.sum() > 0:
            cache = cache * 0.5
        self.cache = cache
        return cache.sum(axis=0)


def _numpy_run(chunks, budget):
    cache, outs = np.zeros([0, 2], np.float32), []
    for rows in chunks:
        cache = np.concatenate([cache, rows])[-budget:]
        if cache.sum() > 0:
            cache = cache * 0.5
        outs.append(cache.sum(axis=0))
    return outs, cache


def test_a_buffer_rebound_to_growing_then_evicted_shapes_follows_eager():
    rng = np.random.default_rng(3)
    chunks = [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for n in (2, 1, 3, 1, 1)]
    chunks[3] = np.abs(chunks[3]) + 5.0  # a positive sum: the halving branch
    expected, final = _numpy_run(chunks, budget=4)
    eager, static = EvictingCache(), d2s.to_static(EvictingCache())
    halved = []
    for rows, ref in zip(chunks, expected, strict=True):
        e = eager(rt.to_tensor(rows), 4).numpy()
        s = static(rt.to_tensor(rows), 4).numpy()
        np.testing.assert_allclose(e, ref, rtol=1e-6)
        np.testing.assert_allclose(s, ref, rtol=1e-6)
        assert static.cache.shape == eager.cache.shape
        halved.append(bool(eager.cache.sum() > 0))
    assert len(set(halved)) == 2, "the inputs take both paths of the tensor if"
    assert isinstance(static.cache, rt.Tensor) and "cache" in dict(static.named_buffers())
    np.testing.assert_allclose(static.cache.numpy(), final, rtol=1e-6)
    # a program per buffer shape read (2, 3 and 4 rows before the call, and the empty start)
    assert len(static.forward.program_cache) == 4


def test_a_buffer_rebound_to_its_own_shape_holds_a_new_tensor_each_call_as_eager():
    """At a steady shape the buffer is rebound as eager rebinds it (a new Tensor each call, so
    a reference the caller kept keeps its value), with one program."""
    eager, layer = EvictingCache(), d2s.to_static(EvictingCache())
    kept = {}
    for net in (eager, layer):
        net.cache = rt.ones([4, 2])
        before, history = net.cache, []
        for _ in range(3):
            out = net(rt.to_tensor(np.full([1, 2], -8.0, np.float32)), 4)
            history.append(net.cache)
        assert net.cache is not before and len({id(h) for h in history}) == 3
        np.testing.assert_allclose(before.numpy(), np.ones([4, 2]))
        np.testing.assert_allclose(out.numpy(), [-23.0, -23.0])
        kept[net] = [h.numpy() for h in history]
    for e, s in zip(kept[eager], kept[layer], strict=True):
        np.testing.assert_allclose(s, e)
    assert len(layer.forward.program_cache) == 1
