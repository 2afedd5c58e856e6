"""A queue of tensors kept on a Layer (`self.queue.append(x.detach())`, then `pop(0)` past a
length, MoCo / a smoothing window): after the pop, the items move one place down. The
write-back took the tensor at the last old index for one the program replaces in place and
wrote the new value into it, so the tensor that had moved to the index before it changed too
(the window held `[t0, t1, new]` where eager holds `[t1, t2, new]`: silently wrong results
from the fourth call on). A tensor still in the list after the call is not updated in place."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt
from runtime import nn


class Window(nn.Layer):
    def __init__(self, size=3):
        super().__init__()
        self.size = size
        self.queue = []

    def forward(self, x):
        self.queue.append(x.detach())
        if len(self.queue) > self.size:
            self.queue.pop(0)
        return rt.stack(self.queue).mean(0)


def test_a_tensor_window_moves_as_eager():
    eager, static_layer = Window(), Window()
    static = d2s.to_static(static_layer)
    ref = []
    for i in range(7):
        x = np.full((2,), (i + 1) * (-1.0) ** i, np.float32)
        ref = (ref + [x])[-3:]
        e, s = eager(rt.to_tensor(x)), static(rt.to_tensor(x))
        np.testing.assert_allclose(s.numpy(), np.mean(ref, 0), rtol=1e-6)
        np.testing.assert_allclose(e.numpy(), np.mean(ref, 0), rtol=1e-6)
        assert len(static_layer.queue) == len(eager.queue) == len(ref)
        for a, b, r in zip(static_layer.queue, eager.queue, ref, strict=True):
            np.testing.assert_array_equal(a.numpy(), r)
            np.testing.assert_array_equal(b.numpy(), r)
            assert type(a) is type(b) and a.stop_gradient == b.stop_gradient
    kept = static_layer.queue[0]  # (a reference the caller holds keeps its value)
    before = kept.numpy().copy()
    static(rt.to_tensor(np.zeros(2, np.float32)))
    np.testing.assert_array_equal(kept.numpy(), before)
