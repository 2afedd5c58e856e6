"""An attribute that `forward` assigns first, before anything reads it (`self.mode = "big" if
h.abs().max() > 1 else "small"`, then `return h, self.mode`), is no value the call reads:
it is not guarded, so the text or number an earlier call left there does not trace a new
program on every call (it did: one program per value left, 3 for 2 input kinds). Where the
function reads the attribute before assigning it, the guard stays: a caller that changes it
still gets a new program, as eager code would read the new value."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt
from runtime import nn


class Gate(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.mode = "init"
        self.peak = 0

    def forward(self, x):
        h = self.lin(x)
        self.mode = "big" if h.abs().max() > 1 else "small"
        self.peak = int(h.abs().max())
        scale = 2.0 if self.mode == "big" else 0.5
        return h * scale, self.mode, self.peak


class Toggle(nn.Layer):
    """Reads `self.mode` before it assigns it: the value a call starts from matters."""

    def __init__(self):
        super().__init__()
        self.mode = "a"

    def forward(self, x):
        out = x + 1 if self.mode == "a" else x - 1
        self.mode = "b" if out.sum() > 0 else "a"
        return out, self.mode


def _ref(x, w, b):
    h = x @ w + b
    mode = "big" if np.abs(h).max() > 1 else "small"
    return h * (2.0 if mode == "big" else 0.5), mode, int(np.abs(h).max())


def test_an_attribute_assigned_first_is_not_guarded():
    rt.seed(0)
    eager, static_layer = Gate(), Gate()
    static_layer.set_state_dict(eager.state_dict())
    static = d2s.to_static(static_layer)
    w, b = eager.lin.weight.numpy(), eager.lin.bias.numpy()
    for k in (4.0, 0.01, 4.0, 0.01, 3.0):
        x = np.full((2, 2), k, np.float32)
        e, s, r = eager(rt.to_tensor(x)), static(rt.to_tensor(x)), _ref(x, w, b)
        np.testing.assert_allclose(s[0].numpy(), r[0], rtol=1e-6)
        np.testing.assert_allclose(s[0].numpy(), e[0].numpy(), rtol=1e-6)
        assert s[1:] == e[1:] == r[1:] and type(s[2]) is int
        assert (static_layer.mode, static_layer.peak) == (eager.mode, eager.peak) == r[1:]
    assert len(static.forward.program_cache) == 1


def test_an_attribute_read_before_it_is_assigned_stays_guarded():
    eager, static_layer = Toggle(), Toggle()
    static = d2s.to_static(static_layer)
    for v in (1.0, -5.0, 1.0, 0.5, -3.0):
        x = np.full((2,), v, np.float32)
        e, s = eager(rt.to_tensor(x)), static(rt.to_tensor(x))
        np.testing.assert_array_equal(s[0].numpy(), e[0].numpy())
        assert s[1] == e[1] == static_layer.mode == eager.mode
    static_layer.mode = eager.mode = "a"  # (the caller sets it: read as eager reads it)
    e, s = eager(rt.to_tensor([-5.0, 0.0])), static(rt.to_tensor([-5.0, 0.0]))
    np.testing.assert_array_equal(s[0].numpy(), e[0].numpy())
    assert s[1] == e[1]
