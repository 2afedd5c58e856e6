"""Flags that code d2s does not convert sets on parameters while a converted call runs (a
library's `freeze(model.backbone)`, `set_trainable(...)`, a `not_to_static` helper) are set on
every call, as eager code sets them (issue 33). Before, the library ran once, while tracing:
a caller that flipped the flags between calls kept its own values after later calls (the
backbone stayed frozen and got no gradient, the aux head stayed trainable), silently."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


@d2s.not_to_static
def set_trainable(layer, flag):
    """A library helper (runs as plain Python while tracing)."""
    for p in layer.parameters():
        p.trainable = flag


@d2s.not_to_static
def freeze(layer):
    for p in layer.parameters():
        p.stop_gradient = True
        p.need_clip = False


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.backbone = rt.nn.Linear(3, 4)
        self.head = rt.nn.Linear(4, 2)
        self.aux = rt.nn.Linear(3, 1)

    def forward(self, x):
        set_trainable(self.backbone, True)
        freeze(self.aux)
        h = self.backbone(x)
        if h.mean() > 0:  # (a tensor `if`: the inputs take both paths of one program)
            h = rt.tanh(h)
        return self.head(h).mean()


def _flags(m):
    return [(p.stop_gradient, getattr(p, "need_clip", True), p.grad is None)
            for p in m.parameters()]


def _reference(m, x):
    h = x @ m.backbone.weight.numpy() + m.backbone.bias.numpy()
    if h.mean() > 0:
        h = np.tanh(h)
    return (h @ m.head.weight.numpy() + m.head.bias.numpy()).mean()


def test_flags_set_by_a_library_follow_every_call():
    eager, conv = Net(), Net()
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    opts = [rt.optimizer.Momentum(0.1, momentum=0.9, weight_decay=0.01,
                                  parameters=m.parameters()) for m in (eager, conv)]
    rng = np.random.default_rng(0)
    for k in range(4):
        x = rng.normal(size=(2, 3)).astype("float32") * (1 if k % 2 else -1)
        got = []
        for m, fn, opt in ((eager, eager, opts[0]), (conv, static, opts[1])):
            for p in m.backbone.parameters():  # the caller freezes the backbone, and
                p.stop_gradient = True  # unfreezes the aux head, between calls
            for p in m.aux.parameters():
                p.stop_gradient, p.need_clip = False, True
            want = _reference(m, x)
            loss = fn(rt.to_tensor(x))
            np.testing.assert_allclose(float(loss), want, rtol=1e-5)
            loss.backward()
            got.append(_flags(m))
            opt.step()
            opt.clear_grad(set_to_zero=False)
        assert got[0] == got[1]
        assert got[0][:2] == [(False, True, False)] * 2  # (the backbone trained, as eager)
        for a, b in zip(eager.parameters(), conv.parameters(), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert len(static.forward.program_cache) == 1


def test_a_converted_step_whose_helper_freezes_by_stage():
    """`train_step(model, opt, x, stage)`: an unconverted helper freezes the backbone in stage
    0 and unfreezes it in stage 1, and the caller freezes it again after every step (a
    callback); parameters and flags after each step as eager's."""

    @d2s.not_to_static
    def apply_stage(model, stage):
        for p in model.backbone.parameters():
            p.trainable = stage > 0

    def train_step(model, opt, x, stage):
        apply_stage(model, stage)
        loss = model(x)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return float(loss)

    eager, conv = Net(), Net()
    conv.set_state_dict(eager.state_dict())
    opts = [rt.optimizer.Adam(0.05, parameters=m.parameters()) for m in (eager, conv)]
    static = d2s.to_static(train_step)
    rng = np.random.default_rng(1)
    for stage in (1, 1, 0, 1, 1):
        x = rt.to_tensor(rng.normal(size=(2, 3)).astype("float32"))
        r1 = train_step(eager, opts[0], x, stage)
        r2 = static(conv, opts[1], x, stage)
        assert type(r1) is type(r2) is float
        np.testing.assert_allclose(r1, r2, rtol=1e-5)
        assert _flags(eager) == _flags(conv)
        for m in (eager, conv):
            set_trainable(m.backbone, False)
        for a, b in zip(eager.parameters(), conv.parameters(), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


class GatedFreeze(rt.nn.Layer):
    """The library call runs on the runs a tensor condition picks only."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 1)

    def forward(self, x):
        if x.mean() > 0:
            freeze(self.fc)
        return self.fc(x).sum()


def test_a_library_flag_set_under_a_tensor_if_is_refused_at_the_line():
    net = GatedFreeze()
    x = rt.to_tensor(np.ones((2, 3), "float32"))
    net(x)  # (eagerly: frozen on this run only)
    assert net.fc.weight.stop_gradient
    net.fc.weight.stop_gradient = False
    with pytest.raises(ConversionError) as info:
        d2s.to_static(net)(x)
    text = str(info.value)
    assert "`.stop_gradient` of the parameter" in text and "if x.mean() > 0:" in text
    assert "code d2s does not convert" in text
    assert not net.fc.weight.stop_gradient  # (a failed trace leaves the flags as they were)


class Trainer:
    """Holds the model; its step calls a library freeze on the model's backbone."""

    def __init__(self, model):
        self.model = model
        self.opt = rt.optimizer.SGD(0.1, parameters=model.parameters())


def test_a_library_freezing_the_model_a_trainer_holds():
    @d2s.not_to_static
    def unfreeze(layer):
        for p in layer.parameters():
            p.stop_gradient = False

    def step(trainer, x):
        unfreeze(trainer.model.backbone)
        loss = trainer.model(x)
        loss.backward()
        trainer.opt.step()
        trainer.opt.clear_grad()
        return loss

    eager, conv = Net(), Net()
    conv.set_state_dict(eager.state_dict())
    t1, t2 = Trainer(eager), Trainer(conv)
    static = d2s.to_static(step)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.normal(size=(2, 3)).astype("float32")
        for t, fn in ((t1, step), (t2, static)):
            fn(t, rt.to_tensor(x))
            assert _flags(t.model)[:2] == [(False, True, False)] * 2  # (unfrozen, as eager)
            for p in t.model.backbone.parameters():  # (frozen again by the caller)
                p.stop_gradient = True
        for a, b in zip(eager.parameters(), conv.parameters(), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
