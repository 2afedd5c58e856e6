"""`self.buf[i] = v` in a converted forward: an in-place write into a tensor created outside
the function (a Layer's buffer: MoCo's key queue and its pointer, a preallocated key/value
cache). The converted call raised the internal `AttributeError: Tensor._data has no static
form`; the program now overwrites the buffer when it runs (as `set_value` does), reads after
the write see the new value (in branches and graph loops too), one program serves every call,
and the buffer holds eager's values after each call. A written value that requires a gradient
(eager code would chain the buffer's history across calls) is refused at the user's line."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .messages import assert_at_user_line


class KeyQueue(nn.Layer):
    """MoCo's dequeue-and-enqueue of a key memory."""

    def __init__(self, size=4, dim=2):
        super().__init__()
        self.register_buffer("queue", rt.zeros([size, dim]))
        self.register_buffer("ptr", rt.zeros([], "int64"))

    def forward(self, keys):
        n = keys.shape[0]
        ptr = self.ptr
        if ptr + n > self.queue.shape[0]:
            ptr = ptr * 0
        self.queue[ptr:ptr + n] = keys
        self.ptr[...] = (ptr + n) % self.queue.shape[0]
        return (self.queue * 1.0).sum(axis=1)


class PreallocatedKVCache(nn.Layer):
    """Incremental decoding into a fixed-size cache, one position per call."""

    def __init__(self):
        super().__init__()
        self.k = nn.Linear(2, 2)
        self.register_buffer("k_cache", rt.zeros([4, 2]))

    def forward(self, x, pos):
        with rt.no_grad():
            self.k_cache[pos] = self.k(x)
        scores = F.softmax((self.k_cache[:pos + 1] * x).sum(axis=1), axis=0)
        if scores.max() > 0.9:
            scores = scores * 0.0
        return scores


class BranchAndLoopWrites(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("q", rt.zeros([4]))

    def forward(self, x, n):
        if x.mean() > 0:
            self.q[0] = x.sum()
        for i in range(n):
            self.q[i + 1] = x.sum() * (i + 1.0)
        return self.q * 2.0


def _check_calls(make, calls):
    rt.seed(0)
    eager = make()
    rt.seed(0)
    converted = make()
    static = d2s.to_static(converted)
    for args in calls:
        want = eager(*[rt.to_tensor(a) for a in args])
        got = static(*[rt.to_tensor(a) for a in args])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
        for (name, w), (_, g) in zip(eager.named_buffers(), converted.named_buffers(),
                                     strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, err_msg=name)
    return static.forward


def test_a_key_queue_and_its_pointer_are_written_when_the_program_runs():
    keys = [np.full([2, 2], v, "float32") for v in (1.0, 2.0, 3.0)] + [np.full([3, 2], 4.0,
                                                                              "float32")]
    static = _check_calls(KeyQueue, [(k,) for k in keys])
    assert len(static.program_cache) == 2  # two key counts, one program each


def test_a_preallocated_cache_written_position_by_position():
    xs = [np.array(v, "float32") for v in ([1.0, 0.5], [-1.0, 2.0], [3.0, 3.0], [0.1, 0.0])]
    static = _check_calls(PreallocatedKVCache, [(x, np.int64(i)) for i, x in enumerate(xs)])
    assert len(static.program_cache) == 1


def test_writes_in_a_tensor_branch_and_a_graph_loop():
    calls = [(np.array([1.0, 2.0], "float32"), np.int64(3)),
             (np.array([-1.0, -2.0], "float32"), np.int64(1)),
             (np.array([0.5, 0.5], "float32"), np.int64(0))]
    static = _check_calls(BranchAndLoopWrites, calls)
    assert len(static.program_cache) == 1


class CacheWithGradient(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.register_buffer("cache", rt.zeros([3, 2]))

    def forward(self, x):
        self.cache[0] = self.fc(x)
        return self.cache.sum()


def test_a_value_that_requires_a_gradient_is_refused_at_the_line():
    static = d2s.to_static(CacheWithGradient())
    with pytest.raises(RuntimeError, match="requires a gradient") as info:
        static(rt.to_tensor([1.0, 2.0]))
    text = assert_at_user_line(info.value, __file__,
                               CacheWithGradient.forward.__code__.co_firstlineno + 1)
    assert "value.detach()" in text
