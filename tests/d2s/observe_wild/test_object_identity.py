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
