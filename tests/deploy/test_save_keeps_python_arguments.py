"""`d2s.save` of a converted function whose latest call passed a number or str other than its
default (`reduction="mean"`) saves what that call computed: retracing for any batch size
with InputSpecs for the tensors only gave the other arguments their defaults, so the model
computed another function (the unreduced loss), silently. It is saved for the latest call's
batch size, with a warning saying so; a Layer's forward raises, naming the fix."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

F = rt.nn.functional


def focal_loss(logits, targets, gamma=2.0, reduction="none"):
    p = F.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - p_t) ** gamma
    if reduction == "mean":
        return loss.mean()
    return loss


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x, scale=1.0):
        return self.fc(x) * scale


def _inputs():
    rng = np.random.default_rng(0)
    return (rt.to_tensor(rng.standard_normal((4, 3)).astype("float32")),
            rt.to_tensor((rng.random((4, 3)) > 0.5).astype("float32")))


def test_saved_function_computes_what_the_latest_call_did(tmp_path):
    logits, targets = _inputs()
    static = d2s.to_static(focal_loss)
    live = static(logits, targets, 2.0, "mean")
    with pytest.warns(UserWarning, match="saved for batch size 4 only"):
        d2s.save(static, str(tmp_path / "focal"))
    got = d2s.load(str(tmp_path / "focal"))(logits, targets)
    assert got.shape == live.shape == []
    np.testing.assert_allclose(got.numpy(), live.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got.numpy(), focal_loss(logits, targets, 2.0, "mean").numpy(),
                               rtol=1e-6)


def test_defaults_are_saved_for_any_batch(tmp_path):
    logits, targets = _inputs()
    static = d2s.to_static(focal_loss)
    live = static(logits, targets)
    d2s.save(static, str(tmp_path / "focal"))
    model = d2s.load(str(tmp_path / "focal"))
    np.testing.assert_allclose(model(logits, targets).numpy(), live.numpy(), rtol=1e-6)
    half = model(logits[:2], targets[:2])  # (any batch size)
    np.testing.assert_allclose(half.numpy(), live.numpy()[:2], rtol=1e-6)


def test_a_layer_called_with_another_number_raises(tmp_path):
    layer = d2s.to_static(Head())
    layer(_inputs()[0], 0.5)
    with pytest.raises(ValueError, match="not tensors with values other than their defaults"):
        d2s.save(layer, str(tmp_path / "head"))
