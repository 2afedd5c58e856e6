"""Plumbing idioms of 2025-era model repos around the math: ModelOutput-style dataclasses
returned from both branches of a tensor `if`, loss dicts summed with `sum(d.values())`,
logging through f-strings and `print`, `assert`s with messages on shapes, a Newton solver in a
`while` on a tensor with a Python iteration cap, a config dict with defaults, closures that
build activation functions, NumPy arrays as constants."""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


@dataclass
class ClassifierOutput:
    logits: paddle.Tensor
    loss: paddle.Tensor | None = None
    confident: paddle.Tensor | None = None


class ClassifierWithOutput(nn.Layer):
    """A head returning a ModelOutput-like dataclass; the loss exists only with labels, and
    low-confidence batches get their logits tempered (a tensor condition rebinding a field)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x, labels=None):
        logits = self.fc(x)
        out = ClassifierOutput(logits=logits)
        probs = F.softmax(logits, axis=-1)
        if probs.max(axis=-1).mean() < 0.5:
            out.logits = logits / 2.0
        out.confident = probs.max(axis=-1) > 0.5
        if labels is not None:
            out.loss = F.cross_entropy(out.logits, labels)
        return out.logits, out.loss, out.confident


case(args=[(rand(2, 3), None), (rand(2, 3) * 20, i64([1, 3]))], rtol=1e-5,
     atol=1e-6)(ClassifierWithOutput)


class Decision(NamedTuple):
    action: paddle.Tensor
    value: paddle.Tensor


@case(args=[(f32([0.2, 0.9, 0.1]), 0.5), (f32([0.2, 0.3, 0.1]), 0.5)])
def decision_namedtuple_in_branches(q_values, threshold):
    """A NamedTuple built in both branches of a tensor `if`."""
    best = q_values.max()
    if best > threshold:
        d = Decision(action=q_values.argmax(), value=best)
    else:
        d = Decision(action=paddle.to_tensor(-1, dtype="int64"), value=q_values.mean())
    return d.action, d.value * 2


@case(args=[(rand(2, 3), rand(2, 3), {"mse": 1.0, "l1": 0.5}),
            (rand(2, 3), rand(2, 3), {"mse": 1.0})], stdout=("loss/",))
def weighted_loss_dict(pred, target, weights):
    """A dict of named losses weighted by a config dict, summed with sum(d.values()) and
    logged with f-strings of Python values (the weights)."""
    losses = {}
    if "mse" in weights:
        losses["mse"] = F.mse_loss(pred, target) * weights["mse"]
    if "l1" in weights:
        losses["l1"] = (pred - target).abs().mean() * weights["l1"]
    for name, w in weights.items():
        print(f"loss/{name} weight={w:.2f}", losses[name])
    total = sum(losses.values())
    return total, losses


@case(args=[(rand(2, 3),), (rand(2, 4),)], raises=(AssertionError,))
def assert_hidden_size(x):
    """Shape checks with messages, as model code writes them before a reshape."""
    B, H = x.shape
    assert H % 3 == 0, f"hidden size {H} must be divisible by 3 heads"
    heads = x.reshape([B, 3, H // 3])
    assert heads.shape[1] == 3
    return heads.sum(axis=-1)


def _np_newton_sqrt(a, tol, max_iter):
    x = np.maximum(a, 1.0)
    it = 0
    while np.abs(x * x - a).max() > tol and it < max_iter:
        x = 0.5 * (x + a / x)
        it += 1
    return x.astype(np.float32), it


@case(args=[(f32([2.0, 9.0]), 1e-4, 20), (f32([2.0, 9.0]), 1e-4, 1), (f32([1.0, 4.0]), 1e-4, 20)],
      ref=_np_newton_sqrt, rtol=1e-5)
def newton_sqrt(a, tol, max_iter):
    """A `while` whose condition mixes a tensor test and a Python iteration cap."""
    x = paddle.maximum(a, paddle.ones_like(a))
    it = 0
    while (x * x - a).abs().max() > tol and it < max_iter:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


_DEFAULTS = {"activation": "gelu", "dropout": 0.0, "residual": True}


def _make_act(name):
    if name == "gelu":
        return F.gelu
    if name == "swish":
        return lambda t: t * F.sigmoid(t)
    def scaled_relu(t):
        return F.relu(t) * 1.5
    return scaled_relu


@case(args=[(rand(2, 3), {}), (rand(2, 3), {"activation": "swish", "residual": False}),
            (rand(2, 3), {"activation": "relu"})], rtol=1e-5, atol=1e-6)
def mlp_from_config(x, overrides):
    """Config merged with defaults, the activation made by a factory returning closures and
    lambdas, a residual chosen by the config; weights are NumPy constants."""
    cfg = {**_DEFAULTS, **overrides}
    act = _make_act(cfg["activation"])
    w = paddle.to_tensor(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))
    h = act(x @ w)
    if cfg["dropout"] > 0:
        h = F.dropout(h, cfg["dropout"])
    return x + h if cfg["residual"] else h


class RunningStatsTracker(nn.Layer):
    """A Layer keeping Python counters and a running mean in `self`, reset when the input's
    mean jumps (a tensor condition); the counters restart every call (stateless output)."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self.resets = 0

    def forward(self, xs):
        self.count, self.resets = 0, 0
        mean = paddle.zeros([xs.shape[-1]])
        for x in xs:
            if (x - mean).abs().max() > 1.0 and self.count > 0:
                mean = paddle.zeros_like(mean)
                self.count = 0
                self.resets += 1
            self.count += 1
            mean = mean + (x - mean) / self.count
        return mean, self.count, self.resets


case(args=[(f32([[0.1, 0.2], [0.3, 0.1], [0.2, 0.2]]),),
           (f32([[0.1, 0.2], [3.0, 3.0], [3.1, 2.9]]),)])(RunningStatsTracker)
