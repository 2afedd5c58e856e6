"""Streaming and cached-state models (issue 35, item 1): a Layer buffer reassigned in forward
(`self.cache = new_tensor`) and a plain (non-Layer) object whose method sets `self.field`
under a tensor `if` convert: one program, the state written back after every call, eager vs
static vs a NumPy reference over calls that take both branches; the gradient through the
cached state against finite differences. A field that is a tensor on one path and None on the
other is None where eager code leaves it None (issue 35)."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.state.helpers import variables_reachable
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line

STEPS = [np.array([[1.0, 2.0]], "float32"), np.array([[-3.0, 0.5]], "float32"),
         np.array([[0.5, 0.5]], "float32"), np.array([[-1.0, -1.0]], "float32")]


class StreamingSum(rt.nn.Layer):
    """Keeps the last frame in a buffer; doubles it when the new frame is positive."""

    def __init__(self):
        super().__init__()
        self.register_buffer("state", rt.zeros([1, 2]))

    def forward(self, x):
        self.state = (self.state + x) * 0.5
        if x.sum() > 0:
            self.state = self.state * 2.0
        return self.state.sum() * x.sum()


def streaming_reference(frames):
    state, outs = np.zeros((1, 2)), []
    for x in frames:
        state = (state + x) * 0.5
        if x.sum() > 0:
            state = state * 2.0
        outs.append(state.sum() * x.sum())
    return outs, state


def test_a_buffer_reassigned_in_forward_is_written_back_every_call():
    eager, static = StreamingSum(), d2s.to_static(StreamingSum())
    want, last = streaming_reference(STEPS)
    for x, w in zip(STEPS, want, strict=True):
        for layer in (eager, static):
            np.testing.assert_allclose(float(layer(rt.to_tensor(x))), w, rtol=1e-6)
    for layer in (eager, static):
        np.testing.assert_allclose(layer.state.numpy(), last, rtol=1e-6)
        assert "state" in dict(layer.named_buffers())
    assert len(static.forward.program_cache) == 1
    assert variables_reachable(static) == []  # the buffer holds a Tensor after each call


def test_the_gradient_through_the_buffer_matches_finite_differences():
    static = d2s.to_static(StreamingSum())
    static(rt.to_tensor(STEPS[0]))  # the buffer holds a frame
    start = static.state.numpy().astype("float64")
    for x in STEPS[1:3]:  # a negative and a positive frame: both branches
        def f(v, start=start):
            s = (start + v) * 0.5
            s = s * 2.0 if v.sum() > 0 else s
            return float(s.sum() * v.sum())
        xt = rt.to_tensor(x, stop_gradient=False)
        y = static(xt)
        # (the buffer holds the last call's value with its graph, as eager's does: a plain
        # backward() would reach the graph the previous one freed and raise, as eager's)
        y.backward(retain_graph=True)
        np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(f, x.astype("float64")),
                                   rtol=1e-4, atol=1e-5)
        start = static.state.numpy().astype("float64")


class RunningMax:
    """A plain helper object (not a Layer), as metric and cache helpers are written."""

    def __init__(self):
        self.best = rt.to_tensor(-1e9)
        self.improved = rt.to_tensor(False)

    def update(self, v):
        if v.max() > self.best:
            self.best = v.max()
            self.improved = rt.to_tensor(True)
        else:
            self.improved = rt.to_tensor(False)
        return v - self.best


def track(tracker, v):
    return tracker.update(v) * 2.0


def test_a_plain_objects_fields_set_under_a_tensor_if():
    static = d2s.to_static(track)
    eager_t, static_t = RunningMax(), RunningMax()
    best = -1e9
    for x in ([1.0, 3.0], [0.5, 2.0], [4.0, -1.0], [1.0, 1.0]):
        v = np.array(x, "float32")
        improved = v.max() > best
        best = max(best, v.max())
        want = (v - best) * 2.0
        for fn, tracker in ((track, eager_t), (static, static_t)):
            np.testing.assert_allclose(fn(tracker, rt.to_tensor(v)).numpy(), want)
            assert float(tracker.best) == best and bool(tracker.improved) == improved
    assert len(static.program_cache) == 1


class LastPositive:
    def __init__(self):
        self.last = None

    def update(self, v):
        if v.mean() > 0:
            self.last = v
        return v * 2.0


def keep(holder, v):
    return holder.update(v)


def test_a_field_none_on_one_path_is_none_where_eager_leaves_it():
    """(issue 35: was refused) the field keeps None on the calls that do not set it."""
    eager_h, static_h = LastPositive(), LastPositive()
    static = d2s.to_static(keep)
    for v in ([-1.0, -2.0], [1.0, 2.0], [-3.0, 0.5]):
        x = np.array(v, "float32")
        np.testing.assert_allclose(static(static_h, rt.to_tensor(x)).numpy(),
                                   keep(eager_h, rt.to_tensor(x)).numpy())
        assert (static_h.last is None) == (eager_h.last is None)
        if eager_h.last is not None:
            np.testing.assert_allclose(static_h.last.numpy(), eager_h.last.numpy())