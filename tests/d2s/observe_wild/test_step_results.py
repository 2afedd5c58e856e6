"""What a whole converted training step gives back, as eager: the loss and a `clone()` of the
logits require a gradient (their graph freed by the step's backward, so a second backward
raises eager's error), `detach()` does not, `.numpy()` is a NumPy array, `.item()` and
`int()` are Python numbers; and inference under AMP with a Python list of ints."""
import copy
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, grads_none


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.aux = nn.Linear(8, 1)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(h), self.aux(h)


def train_step(model, opt, x, y):
    logits, _ = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    pred = logits.argmax(-1)
    return {"loss": loss, "logits": logits.clone(), "detached": loss.detach(),
            "pred": pred.numpy(), "value": loss.item(), "first": int(pred[0])}


def _data(n=3):
    rng = np.random.default_rng(0)
    return [(rt.to_tensor(rng.standard_normal((6, 4)).astype("float32")),
             rt.to_tensor(rng.integers(0, 3, 6))) for _ in range(n)]


def test_whole_step_results_are_eagers():
    rt.seed(0)
    base = Net()
    models = [copy.deepcopy(base) for _ in range(2)]
    opts = [rt.optimizer.Adam(0.01, parameters=m.parameters()) for m in models]
    fns = [train_step, d2s.to_static(train_step)]
    for x, y in _data():
        want, got = (fn(m, o, x, y) for fn, m, o in zip(fns, models, opts, strict=True))
        assert_same_leaves(got, want)
        assert not got["loss"].stop_gradient and got["detached"].stop_gradient
        for out in (want, got):
            with pytest.raises(RuntimeError, match="already freed"):
                (out["logits"].sum() * 2).backward()
    assert_same_model(models[1], models[0])


def amp_step(model, scaler, x, y, use_aux):
    with rt.amp.auto_cast(dtype="bfloat16"):
        logits, aux = model(x)
        loss = F.cross_entropy(logits.astype("float32"), y)
        if use_aux:
            loss = loss + 0.1 * aux.astype("float32").mean()
    scaled = scaler.scale(loss)
    scaled.backward()
    return {"loss": loss, "logits_dtype": str(logits.dtype), "scaled": scaled.item()}


def predict(model, x):
    with rt.no_grad():
        logits, _ = model(x)
    probs = F.softmax(logits, -1)
    top = probs.argmax(-1)
    return probs.detach(), top, probs.max().item(), [int(t) for t in top]


def test_amp_steps_with_an_optional_aux_loss_and_predictions_are_eagers():
    """The scaler's `step`/`update` stay outside (documented); the aux head has a gradient
    only on the calls that add its loss."""
    rt.seed(0)
    base = Net()
    runs = []
    for convert in (False, True):
        model = copy.deepcopy(base)
        runs.append((model, rt.optimizer.SGD(0.1, parameters=model.parameters()),
                     rt.amp.GradScaler(init_loss_scaling=1024.0),
                     d2s.to_static(amp_step) if convert else amp_step,
                     d2s.to_static(predict) if convert else predict))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (bfloat16 emulated on the CPU)
        for i, (x, y) in enumerate(_data(4)):
            outs = []
            for model, opt, scaler, step, pred in runs:
                out = step(model, scaler, x, y, i % 2 == 0)
                grads = grads_none(model)
                scaler.step(opt)
                scaler.update()
                opt.clear_grad(set_to_zero=False)
                outs.append((out, grads, pred(model, x)))
            assert_same_leaves(outs[1], outs[0], rtol=1e-3, atol=1e-3)
            assert outs[0][1]["aux.weight"] is (i % 2 == 1)
    assert_same_model(runs[1][0], runs[0][0], rtol=1e-3, atol=1e-3)
