"""Which objects a converted call gives back, as eager: one tensor returned in several places
(`return loss, {"loss": loss}`, `self.last_loss = loss` set on the first call) is one object;
a Tensor the user kept from an earlier call keeps its value."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.last_loss = None

    def forward(self, x, y):
        logits = self.fc(x)
        loss = F.cross_entropy(logits, y)
        self.last_loss = loss
        return loss, {"loss": loss, "logits": logits}


def _batches():
    rng = np.random.default_rng(0)
    return [(rt.to_tensor(rng.standard_normal((6, 4)).astype("float32")),
             rt.to_tensor(rng.integers(0, 3, 6))) for _ in range(3)]


def test_one_tensor_returned_in_two_places_is_one_object():
    rt.seed(0)
    eager = Model()
    static = d2s.to_static(copy.deepcopy(eager))
    (x, y), *_ = _batches()
    for model in (eager, static):
        loss, metrics = model(x, y)
        assert metrics["loss"] is loss is model.last_loss
        assert not loss.stop_gradient
    np.testing.assert_allclose(static.last_loss.numpy(), eager.last_loss.numpy(), rtol=1e-6)


def evaluate(model, x, y):
    loss, _ = model(x, y)
    return loss


def test_a_tensor_kept_from_an_earlier_call_keeps_its_value():
    rt.seed(0)
    base = Model()
    kept = {}
    for fn in (evaluate, d2s.to_static(evaluate)):
        model, values = copy.deepcopy(base), []
        model(*_batches()[0])  # a training call first: last_loss holds a Tensor
        for x, y in _batches():
            with rt.no_grad():
                fn(model, x, y)
            values.append(model.last_loss)  # a history of the losses, as objects
        kept[fn] = [v.item() for v in values]
    want, got = kept.values()
    assert got == pytest.approx(want, rel=1e-6) and len(set(want)) == 3


class SmoothedLoss(nn.Layer):
    """Keeps an exponential moving average of its loss (a tensor the call reads and
    rebinds) and the last loss, for a progress bar."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.ema = rt.zeros([])
        self.last_loss = None

    def forward(self, x, y):
        loss = F.cross_entropy(self.fc(x), y)
        self.ema = self.ema * 0.9 + loss.detach() * 0.1
        self.last_loss = loss
        return loss


def test_an_ema_of_the_loss_kept_per_step_keeps_its_values():
    """Each step's `model.ema` and `model.last_loss` kept in a history: a new Tensor per
    call, each with its own value (eager's, and the NumPy recurrence of the losses), from
    one program whose EMA input is read from the attribute on every call."""
    rt.seed(0)
    base = SmoothedLoss()
    runs = {}
    for mode in ("eager", "static"):
        model = copy.deepcopy(base)
        step = model if mode == "eager" else d2s.to_static(model)
        opt = rt.optimizer.SGD(0.1, parameters=model.parameters())
        history = []
        for x, y in _batches() * 2:
            loss = step(x, y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            history.append((model.ema, model.last_loss, loss))
        runs[mode] = history
        if mode == "static":
            assert step.forward.get_traced_count() == 1
    want, got = runs["eager"], runs["static"]
    assert len(got) == len(want) == 6
    ema = 0.0
    for (g_ema, g_last, g_loss), (w_ema, w_last, _) in zip(got, want, strict=True):
        ema = ema * 0.9 + w_last.item() * 0.1
        assert g_last is g_loss and not g_last.stop_gradient and g_ema.stop_gradient
        np.testing.assert_allclose([g_ema.item(), g_last.item()], [w_ema.item(), w_last.item()],
                                   rtol=1e-5)
        assert g_ema.item() == pytest.approx(ema, rel=1e-5)
    assert len({id(e) for e, _, _ in got}) == 6 and len({id(t) for _, t, _ in got}) == 6
    model.ema = rt.to_tensor(np.float32(10.0))  # set by the caller: the next call reads it
    x, y = _batches()[0]
    with rt.no_grad():
        loss = step(x, y)
    assert model.ema.item() == pytest.approx(9.0 + loss.item() * 0.1, rel=1e-6)
    assert step.forward.get_traced_count() == 1
