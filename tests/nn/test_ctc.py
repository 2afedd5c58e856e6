"""`nn.CTCLoss` in a speech-style model: eager vs `d2s.to_static` vs the brute-force reference
(every alignment enumerated, tests/ops/opinfo_nn_ctc.py), gradients of the whole model vs
central differences, `norm_by_times`, and second derivatives refused."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from layer_gradcheck import check_grads

import d2s
import runtime as rt
from runtime import nn

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "ops"))
from opinfo_nn_ctc import ctc_brute_force


class TinyAcousticModel(nn.Layer):
    """Frames [N, T, F] -> per-frame class scores [T, N, C], the layout CTC takes."""

    def __init__(self, features: int = 3, classes: int = 3):
        super().__init__()
        self.proj = nn.Linear(features, classes)
        self.ctc = nn.CTCLoss(blank=0, reduction="mean")

    def forward(self, frames, labels, input_lengths, label_lengths):
        logits = self.proj(frames).transpose([1, 0, 2])
        return self.ctc(logits, labels, input_lengths, label_lengths)


def _batch(rng):
    frames = rng.standard_normal((3, 4, 3))
    labels = np.array([[1, 1], [2, 1], [2, 0]], np.int32)
    return frames, labels, np.array([4, 3, 2], np.int64), np.array([2, 2, 1], np.int64)


def test_ctc_model_eager_static_and_brute_force_agree():
    rt.seed(0)
    model = TinyAcousticModel()
    model.to(dtype="float64")
    frames, labels, in_len, lab_len = _batch(np.random.default_rng(0))
    w, b = model.proj.weight.numpy(), model.proj.bias.numpy()
    logits = (frames @ w + b).transpose(1, 0, 2)
    want = (ctc_brute_force(logits, labels, in_len, lab_len) / lab_len).mean()
    args = [rt.to_tensor(a) for a in (frames, labels, in_len, lab_len)]
    eager = model(*args).item()
    static = d2s.to_static(model)
    converted = static(*args).item()
    assert eager == pytest.approx(want, rel=1e-10)
    assert converted == pytest.approx(eager, rel=1e-12)
    # other lengths, same shapes: the same program, not a retrace with lengths baked in
    in_len2, lab_len2 = np.array([2, 4, 4], np.int64), np.array([1, 2, 1], np.int64)
    args2 = [rt.to_tensor(a) for a in (frames, labels, in_len2, lab_len2)]
    want2 = (ctc_brute_force(logits, labels, in_len2, lab_len2) / lab_len2).mean()
    assert static(*args2).item() == pytest.approx(want2, rel=1e-10)
    assert len(static.forward.program_cache) == 1


def test_ctc_model_gradients_match_finite_differences():
    rt.seed(1)
    model = TinyAcousticModel()
    model.to(dtype="float64")
    frames, labels, in_len, lab_len = _batch(np.random.default_rng(1))
    check_grads(lambda f: model(f, rt.to_tensor(labels), rt.to_tensor(in_len),
                                rt.to_tensor(lab_len)),
                [frames], params=list(model.parameters()))


def test_converted_training_step_matches_eager_step():
    rng = np.random.default_rng(2)
    frames, labels, in_len, lab_len = _batch(rng)
    args = [rt.to_tensor(a.astype(np.float32) if a.dtype == np.float64 else a)
            for a in (frames, labels, in_len, lab_len)]
    weights = []
    for convert in (False, True):
        rt.seed(5)
        model = TinyAcousticModel()
        opt = rt.optimizer.SGD(0.5, parameters=model.parameters())
        step = d2s.to_static(model) if convert else model
        for _ in range(3):
            loss = step(*args)
            loss.backward()
            opt.step()
            opt.clear_grad()
        weights.append(model.proj.weight.numpy())
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-5, atol=1e-6)


def test_norm_by_times_divides_the_gradient_by_each_input_length():
    frames, labels, in_len, lab_len = _batch(np.random.default_rng(3))
    logits = frames.transpose(1, 0, 2)
    grads = []
    for norm in (False, True):
        x = rt.to_tensor(logits, stop_gradient=False)
        loss = nn.functional.ctc_loss(x, rt.to_tensor(labels), rt.to_tensor(in_len),
                                      rt.to_tensor(lab_len), reduction="sum",
                                      norm_by_times=norm)
        loss.backward()
        grads.append((loss.item(), x.grad.numpy()))
    assert grads[0][0] == grads[1][0]  # the loss itself is unchanged
    np.testing.assert_allclose(grads[1][1], grads[0][1] / in_len[None, :, None], rtol=1e-12)


def test_second_derivative_is_refused():
    frames, labels, in_len, lab_len = _batch(np.random.default_rng(4))
    x = rt.to_tensor(frames.transpose(1, 0, 2), stop_gradient=False)
    loss = nn.functional.ctc_loss(x, rt.to_tensor(labels), rt.to_tensor(in_len),
                                  rt.to_tensor(lab_len))
    (dx,) = rt.grad(loss, x, create_graph=True)
    with pytest.raises(RuntimeError, match="ctc_loss_grad' has no gradient rule"):
        rt.grad(dx.sum(), x)


def test_ctcloss_layer_checks_reduction():
    with pytest.raises(ValueError, match="CTCLoss: reduction must be"):
        nn.CTCLoss(reduction="batchmean")
