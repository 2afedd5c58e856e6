"""A `collections.deque(maxlen=n)` kept by the caller (on the Layer, or passed in) that the
converted call appends to on every call (issue 35, "a trace on every call"): frame stacking
for a streaming policy, a window of recent hidden states, n-step rewards. It was refused
(`StateChangeError: ... a collections.deque that outlives the call`). Now the deque is a
window (`writeback_deques`): the program reads the tensors it holds when it runs, after each
call it holds eager's items (the very tensors it kept, `maxlen` dropping the oldest, and the
new ones), and one program serves every call once it is full (one per length while it
fills). Inputs take both paths of a tensor `if`; gradients flow into the kept tensors' graphs
as eager's do."""
import collections

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves, assert_same_model

N = 3
INPUTS = [np.array(v, np.float32) for v in (
    [1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, 0.5], [-0.5, -4.0], [3.0, 1.0],
    [-1.0, 0.0])]


class FrameStack(rt.nn.Layer):
    """The last N observations, stacked: a streaming policy's input."""

    def __init__(self, detach=True):
        super().__init__()
        self.enc = rt.nn.Linear(2, 2)
        self.frames = collections.deque(maxlen=N)
        self.detach = detach

    def forward(self, x):
        h = self.enc(x)
        self.frames.append(h.detach() if self.detach else h)
        stacked = rt.stack(list(self.frames)).mean(0)
        if stacked.sum() > 0:
            return (stacked * x).sum()
        return (self.frames[-1] - stacked).sum()


def n_step_reward(reward, rewards, gamma):
    """Discounted sum of the last rewards, the deque passed in by the caller's loop."""
    rewards.append(reward * 1.0)
    total = rt.zeros([])
    for k, r in enumerate(rewards):
        total = total + gamma ** k * r
    if total > 0:
        return total
    return -total


def _numpy_n_step(seen, gamma):
    kept = seen[-2:]
    total = sum(gamma ** k * r for k, r in enumerate(kept))
    return total if total > 0 else -total


@pytest.mark.parametrize("detach", [True, False], ids=["detached", "with-graph"])
def test_a_deque_on_the_layer_appended_every_call(detach):
    rt.seed(3)
    eager, static_layer = FrameStack(detach), FrameStack(detach)
    static_layer.set_state_dict(eager.state_dict())
    static = d2s.to_static(static_layer)
    counts = []
    for i, v in enumerate(INPUTS):
        kept = list(static_layer.frames)
        want, got = eager(rt.to_tensor(v)), static(rt.to_tensor(v))
        assert_same_leaves(got, want, f"call {i}")
        assert type(static_layer.frames) is collections.deque
        assert static_layer.frames.maxlen == N
        assert_same_leaves(list(static_layer.frames), list(eager.frames), f"frames {i}")
        # the tensors it kept, themselves (the oldest dropped once full), then the new one
        assert all(a is b for a, b in zip(static_layer.frames, kept[-(N - 1):]))
        if not want.stop_gradient:  # (detached frames on the else path: no gradient)
            want.backward(retain_graph=True)
            got.backward(retain_graph=True)
        assert_same_model(static_layer, eager)
        counts.append(static.forward.get_traced_count())
    assert counts[N:] == [N + 1] * (len(INPUTS) - N)  # (lengths 0 .. N, then one program)


def test_a_deque_passed_in_matches_numpy():
    static = d2s.to_static(n_step_reward)
    got_q, want_q = collections.deque(maxlen=2), collections.deque(maxlen=2)
    seen = []
    for i, v in enumerate(INPUTS):
        r = float(v[0] - v[1])
        seen.append(r)
        want = n_step_reward(rt.to_tensor(r), want_q, 0.5)
        got = static(rt.to_tensor(r), got_q, 0.5)
        assert_same_leaves(got, want, f"call {i}")
        np.testing.assert_allclose(float(got), _numpy_n_step(seen, 0.5), rtol=1e-6)
        assert [float(t) for t in got_q] == [float(t) for t in want_q] == seen[-2:]
    assert static.get_traced_count() == 3


def bad_append(x, q):
    q.append(float(x.shape[0]))  # (a Python number: not a tensor the program computes)
    return x * 2.0


def test_a_python_value_appended_is_refused_and_the_deque_kept():
    q = collections.deque([rt.ones([2])], maxlen=2)
    before = list(q)
    with pytest.raises(d2s.StateChangeError, match=r"changes q, a collections\.deque that "
                       r"outlives the call, other than by appending tensors"):
        d2s.to_static(bad_append)(rt.ones([2]), q)
    assert len(q) == 1 and q[0] is before[0]
