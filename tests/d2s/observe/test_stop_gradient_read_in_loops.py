"""A Python test of `stop_gradient` inside a graph loop's body: eager code decides it per
trip. Where the flag is the same on every trip the converted call gives eager's results;
where the first trip differs from the later ones (a value that starts without a gradient
and gets one from a parameter), one program cannot decide per trip: a ConversionError at
the user's line, never the later trips' answer for the first (it was [1, 1] for eager's
[0, 0] after one trip)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class Gate(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([2], default_initializer=rt.nn.initializer.Assign(
            np.array([1.0, 2.0], "float32")))

    def forward(self, x, steps):
        h = x
        seen = rt.zeros([2])
        for _ in range(steps):
            if not h.stop_gradient:  # the tracked value joins only once it needs a grad
                seen = seen + h
            h = h * self.w
        return seen, h


def _reference(x, w, steps, x_requires_grad):
    h, seen, needs = x.copy(), np.zeros(2, "float32"), x_requires_grad
    for _ in range(steps):
        if needs:
            seen = seen + h
        h = h * w
        needs = True
    return seen, h


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_a_flag_the_same_on_every_trip_converts(steps):
    net = Gate()
    static = d2s.to_static(Gate())
    static.set_state_dict(net.state_dict())
    x_np = np.array([0.5, -1.0], "float32")
    w = np.array([1.0, 2.0], "float32")
    for fn in (net, static):  # x requires a gradient: h does on every trip
        x = rt.to_tensor(x_np, stop_gradient=False)
        seen, h = fn(x, rt.to_tensor(steps))
        ref_seen, ref_h = _reference(x_np, w, steps, True)
        np.testing.assert_allclose(seen.numpy(), ref_seen, rtol=1e-6)
        np.testing.assert_allclose(h.numpy(), ref_h, rtol=1e-6)
        assert h.stop_gradient is False


def test_a_flag_that_changes_after_the_first_trip_is_refused_at_the_read():
    net = Gate()
    x_np = np.array([0.5, -1.0], "float32")
    seen, _ = net(rt.to_tensor(x_np), rt.to_tensor(1))  # eager: the first trip skips
    np.testing.assert_array_equal(seen.numpy(), [0.0, 0.0])
    static = d2s.to_static(net)
    with pytest.raises(d2s.ConversionError) as info:
        static(rt.to_tensor(x_np), rt.to_tensor(1))
    message = str(info.value)
    assert "test_stop_gradient_read_in_loops.py" in message
    assert "if not h.stop_gradient:" in message
    assert "second trip" in message
    for internal in ("_retval", "Variable(%", "<undefined"):
        assert internal not in message
