"""Tensors captured from outside the arguments (a module global, a closure cell, a field of a
config object passed in, a parameter trained by an eager optimizer) whose value the converted
code reads as Python (`float(G)`, `range(int(n))`, `cfg.k.item()`, `"%d" % t`, `.tolist()`,
`.numpy()`, `operator.index`, a LayerList index): a changed value traces for it, as eager code
reads it anew; code that only computes with such tensors keeps one program."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

pytestmark = pytest.mark.filterwarnings("ignore:d2s.*traced:UserWarning")

TEMPERATURE = rt.to_tensor(2.0)  # a global tensor config, changed between calls


def softened(logits):
    return rt.nn.functional.softmax(logits / float(TEMPERATURE), axis=-1)


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_global_tensor_read_as_a_float():
    static = d2s.to_static(softened)
    logits = np.array([[1.0, 2.0, 4.0]], "float32")
    for t in (2.0, 0.5, 2.0, 1.0):
        TEMPERATURE.set_value(rt.to_tensor(t))
        want = _softmax(logits / t)
        np.testing.assert_allclose(softened(rt.to_tensor(logits)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(logits)).numpy(), want, rtol=1e-6)
    assert len(static.program_cache) == 3
    TEMPERATURE.set_value(rt.to_tensor(2.0))


def _repeat_adder():
    times = rt.to_tensor(1, dtype="int64")

    def add_repeatedly(x):
        for _ in range(int(times)):
            x = x + 1
        return x

    return add_repeatedly, times


def test_a_closure_tensor_read_as_a_loop_count():
    fn, times = _repeat_adder()
    static = d2s.to_static(fn)
    x = rt.to_tensor([0.5, 1.5])
    for n in (1, 3, 0, 3):
        times.set_value(rt.to_tensor(n, dtype="int64"))
        np.testing.assert_allclose(fn(x).numpy(), [0.5 + n, 1.5 + n])
        np.testing.assert_allclose(static(x).numpy(), [0.5 + n, 1.5 + n])
    assert len(static.program_cache) == 3


class DecodeConfig:
    def __init__(self):
        self.top_k = rt.to_tensor(2, dtype="int64")


def top_k_mean(scores, cfg):
    k = cfg.top_k.item()
    return rt.topk(scores, k)[0].mean()


def test_a_tensor_in_a_config_object_passed_in():
    static = d2s.to_static(top_k_mean)
    cfg = DecodeConfig()
    scores = np.array([3.0, 1.0, 4.0, 1.5, 9.0], "float32")
    for k in (2, 4, 2, 1):
        cfg.top_k[...] = k
        want = np.sort(scores)[::-1][:k].mean()
        np.testing.assert_allclose(top_k_mean(rt.to_tensor(scores), cfg).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(scores), cfg).numpy(), want)
    assert len(static.program_cache) == 3


class Router(nn.Layer):
    """A head chosen by a buffer (curriculum stage), its value also used as a number in
    several forms."""

    def __init__(self):
        super().__init__()
        self.heads = nn.LayerList([nn.Linear(2, 2) for _ in range(3)])
        self.register_buffer("stage", rt.to_tensor(0, dtype="int64"))

    def forward(self, x):
        tag = "stage %d" % self.stage  # noqa: UP031  (the idiom under test)
        weight = self.stage.tolist() + int(self.stage.numpy()) + operator.index(self.stage)
        return self.heads[int(self.stage)](x) * (weight + 1), tag


def test_a_buffer_choosing_a_layer_and_read_in_every_form():
    eager, model = Router(), Router()
    model.set_state_dict(eager.state_dict())
    static = d2s.to_static(model)
    x = np.array([[1.0, -1.0]], "float32")
    for stage in (0, 2, 1, 2):
        for m in (eager, model):
            m.stage.set_value(rt.to_tensor(stage, dtype="int64"))
        head = eager.heads[stage]
        want = (x @ head.weight.numpy() + head.bias.numpy()) * (3 * stage + 1)
        got, tag = static(rt.to_tensor(x))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(eager(rt.to_tensor(x))[0].numpy(), want, rtol=1e-6)
        assert tag == f"stage {stage}"
    assert len(static.forward.program_cache) == 3


class Gated(nn.Layer):
    """Scales its output by its own bias read as a Python float (a trained parameter, so
    without a gradient through that read, as eagerly)."""

    def __init__(self, read: bool):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.read = read

    def forward(self, x):
        h = self.fc(x)
        return h * float(self.fc.bias) if self.read else h * self.fc.bias


def _train(read: bool, convert: bool):
    rt.seed(3)
    model = Gated(read)
    opt = rt.optimizer.Momentum(0.05, momentum=0.9, parameters=model.parameters(),
                                weight_decay=0.01)
    forward = d2s.to_static(model) if convert else model
    losses = []
    for i in range(4):
        r = np.random.RandomState(i)
        x, y = rt.to_tensor(r.randn(4, 3).astype("float32")), rt.to_tensor(r.randn(4, 1))
        loss = ((forward(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return model, losses, forward


@pytest.mark.parametrize("read", [True, False])
def test_a_parameter_read_as_a_float_follows_optimizer_steps(read):
    eager, eager_losses, _ = _train(read, convert=False)
    model, losses, static = _train(read, convert=True)
    assert len(losses) == len(eager_losses) == 4
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(model.fc.weight.numpy(), eager.fc.weight.numpy(), rtol=1e-5)
    np.testing.assert_allclose(model.fc.bias.numpy(), eager.fc.bias.numpy(), rtol=1e-5)
    # a parameter is an input of the program (never a captured value): one program
    assert len(static.forward.program_cache) == 1


def test_the_retrace_names_the_tensor_whose_value_changed():
    counter = rt.zeros([], "int64")

    def shifted(x):
        return x + int(counter)

    static = d2s.to_static(shifted)
    x = rt.to_tensor([1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(5):
            counter.set_value(rt.to_tensor(i, dtype="int64"))
            np.testing.assert_allclose(static(x).numpy(), [1.0 + i])
    messages = [str(w.message) for w in caught if "traced 5 times" in str(w.message)]
    assert len(messages) == 1
    assert "the value of closure variable counter changed" in messages[0]
