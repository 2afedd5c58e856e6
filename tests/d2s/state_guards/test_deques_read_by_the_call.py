"""A `collections.deque` the converted call only reads, that the caller appends to between
calls (a replay buffer of recent frames, a `deque(maxlen=n)` of observations passed to a
policy, a window kept on the Layer and filled by the training loop). The program read the
tensors the deque held while tracing, and nothing guarded its items: every later call gave
the first call's answer (silently). Its items are now guarded as a list's are, by identity
(`guard_steps.deque_items`, `guards._add`): a call that finds other items traces anew, with
eager's answer. Inputs take both paths of a tensor `if`."""
import collections

import numpy as np
import pytest

import d2s
import runtime as rt

FRAMES = [np.array(v, np.float32) for v in (
    [1.0, 2.0], [-3.0, -1.0], [0.5, -0.25], [-2.0, 4.0], [1.5, 1.5], [-0.5, -4.0])]


def policy(obs, frames):
    """Stack the recent frames, as a frame-stacking policy does."""
    stacked = rt.stack(list(frames)).mean(0)
    if stacked.sum() > 0:
        return obs + stacked
    return obs - stacked


def policy_in_dict(obs, state):
    return policy(obs, state["frames"])


class Smoothed(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.window = collections.deque(maxlen=3)

    def forward(self, x):
        return policy(x, self.window)


def _reference(obs, kept):
    stacked = np.mean(kept, 0)
    return obs + stacked if stacked.sum() > 0 else obs - stacked


@pytest.mark.parametrize("how", ["argument", "in a dict", "on self"])
def test_a_deque_filled_by_the_caller_is_read_anew(how):
    layer = Smoothed()
    fn = {"argument": policy, "in a dict": policy_in_dict, "on self": layer}[how]
    static = d2s.to_static(fn)
    frames = layer.window if how == "on self" else collections.deque(maxlen=3)
    obs = np.array([0.25, -0.75], np.float32)
    for v in FRAMES:
        frames.append(rt.to_tensor(v))
        args = {"argument": (frames,), "in a dict": ({"frames": frames},), "on self": ()}[how]
        want = fn(rt.to_tensor(obs), *args)
        got = static(rt.to_tensor(obs), *args)
        ref = _reference(obs, [f.numpy() for f in frames])
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6)
        np.testing.assert_allclose(want.numpy(), ref, rtol=1e-6)
        assert got.dtype == want.dtype and got.stop_gradient == want.stop_gradient
    assert len(frames) == 3 and [float(f.sum()) for f in frames] == [
        float(v.sum()) for v in FRAMES[-3:]]  # (the call did not change it)


def test_the_same_items_reuse_the_program():
    static = d2s.to_static(policy)
    frames = collections.deque([rt.to_tensor(v) for v in FRAMES[:2]], maxlen=3)
    obs = rt.to_tensor(np.array([1.0, 1.0], np.float32))
    first = static(obs, frames).numpy()
    np.testing.assert_array_equal(static(obs, frames).numpy(), first)
    assert static.get_traced_count() == 1
