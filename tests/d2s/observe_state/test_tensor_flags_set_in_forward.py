"""Flags set on parameters inside a converted `forward` (`p.stop_gradient = self.freeze`,
`p.trainable = ...`, `q.need_clip = ...` over `self.parameters()`) are set on every call, as
eager code sets them: the program replays them after each call and is guarded by the values a
call starts from. Before, they were set while tracing only: over calls where `self.freeze`
goes False, True, False eager code leaves `[False, True, False]` and the converted call left
`[False, True, True]` (and the frozen weight got no gradient on the third call)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = rt.nn.Linear(3, 4)
        self.out = rt.nn.Linear(4, 1)
        self.freeze = False
        self.clip_head = True

    def forward(self, x):
        self.body.weight.stop_gradient = self.freeze
        bias = self.body.bias
        bias.trainable = not self.freeze
        for p in self.out.parameters():
            p.need_clip = self.clip_head
        h = self.body(x)
        if h.mean() > 0:  # (a tensor `if`: the inputs take both paths of one program)
            h = rt.nn.functional.relu(h)
        else:
            h = h * 0.5
        return self.out(h).sum()


def flags(m):
    return [(p.stop_gradient, getattr(p, "need_clip", None), p.grad is None)
            for p in m.parameters()]


def test_flags_set_in_forward_follow_every_call():
    eager, conv = Head(), Head()
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    rng = np.random.default_rng(3)
    opts = [rt.optimizer.SGD(0.1, parameters=m.parameters(), weight_decay=0.01)
            for m in (eager, conv)]
    runs = [(False, True), (True, False), (False, True), (True, True), (False, False),
            (True, True)]
    for k, (freeze, clip) in enumerate(runs):
        x = rng.normal(size=(2, 3)).astype("float32") * (1 if k % 2 else -1)
        got = []
        for m, fn, opt in ((eager, eager, opts[0]), (conv, static, opts[1])):
            m.freeze, m.clip_head = freeze, clip
            loss = fn(rt.to_tensor(x))
            loss.backward()
            got.append((loss, flags(m)))
            opt.step()
            opt.clear_grad()
        assert_same_leaves(got[1], got[0])
        assert got[1][1][0][0] is freeze  # (the weight's flag: this call's)
        for a, b in zip(eager.parameters(), conv.parameters(), strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)


class Gated(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 1)

    def forward(self, x):
        if x.sum() > 0:
            self.fc.weight.need_clip = False
        return self.fc(x).sum()


def test_a_flag_set_under_a_tensor_condition_is_refused_at_the_line():
    static = d2s.to_static(Gated())
    with pytest.raises(d2s.ConversionError, match=r"need_clip.*line \d+: +self\.fc\."
                                                   r"weight\.need_clip = False"):
        static(rt.to_tensor(np.ones((1, 3), "float32")))


class Backbone(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = rt.nn.Linear(3, 4)
        self.head = rt.nn.Linear(4, 1)

    def forward(self, x):
        h = self.stem(x)
        if h.sum() > 0:
            h = rt.tanh(h)
        return self.head(h).mean()


def test_parameters_unfrozen_between_calls_get_gradients_again():
    # (fine-tuning: the stem frozen for two steps, then trained; a program traced with it
    # frozen computes no gradient for it, so unfreezing needs another one: before, the stem
    # never got a gradient again, silently)
    eager, conv = Backbone(), Backbone()
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    opts = [rt.optimizer.Momentum(0.1, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.01) for m in (eager, conv)]
    rng = np.random.default_rng(5)
    for step in range(6):
        x = rng.normal(size=(2, 3)).astype("float32") * (1 if step % 2 else -1)
        got = []
        for m, fn, opt in ((eager, eager, opts[0]), (conv, static, opts[1])):
            for p in m.stem.parameters():
                p.stop_gradient = step < 2 or step == 4
            loss = fn(rt.to_tensor(x))
            loss.backward()
            got.append((loss, flags(m)))
            opt.step()
            opt.clear_grad()
        assert_same_leaves(got[1], got[0])
        # (the stem's weight.grad: None while frozen from the start; after a trained step
        # `clear_grad` leaves zeros, in both)
        assert got[1][1][0][2] is (step < 2)
        for a, b in zip(eager.parameters(), conv.parameters(), strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
