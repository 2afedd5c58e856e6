"""Shared pieces of the whole-training-step tests: models, one step function written as user
code, and eager vs converted runs from the same start."""
from __future__ import annotations

import copy

import numpy as np

import d2s
import runtime as rt
from runtime import nn


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(rt.tanh(self.fc1(x)))


class ConvNet(nn.Layer):
    """Conv + BatchNorm (running statistics) + Dropout + Linear."""

    def __init__(self, p=0.0):
        super().__init__()
        self.conv = nn.Conv2D(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2D(4)
        self.drop = nn.Dropout(p)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        h = nn.functional.relu(self.bn(self.conv(x)))
        return self.fc(self.drop(rt.flatten(h, 1)))


class TwoHeads(nn.Layer):
    """The head a run uses is decided by a tensor: which `.grad` is None is the run's."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head_a = nn.Linear(8, 3)
        self.head_b = nn.Linear(8, 3)

    def forward(self, x):
        h = rt.tanh(self.body(x))
        return self.head_a(h) if h.mean() > 0 else self.head_b(h)


# optimizers with weight decay and momentum (they move a parameter with a zero gradient)
OPTS = [("Momentum", {"weight_decay": 0.01}), ("Adam", {"weight_decay": 0.01}),
        ("AdamW", {"weight_decay": 0.05})]


def make_opt(name, params, lr=0.05, **kw):
    if name == "Momentum":
        return rt.optimizer.Momentum(learning_rate=lr, momentum=0.9, parameters=params, **kw)
    return getattr(rt.optimizer, name)(learning_rate=lr, parameters=params, **kw)


def batches(n, shape, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return [(rt.to_tensor(rng.standard_normal(shape).astype("float32")),
             rt.to_tensor(rng.integers(0, classes, shape[0]).astype("int64")))
            for _ in range(n)]


def step_fn(model, opt, clear=True):
    """A training step as users write it (Paddle's test_train_step idiom)."""
    loss_fn = nn.CrossEntropyLoss()

    def train_step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if clear:
            opt.clear_grad()
        return loss
    return train_step


def pair(make_model, opt_name, **opt_kw):
    """(eager model, opt), (model for the converted step, opt) from the same parameters."""
    rt.seed(0)
    m1 = make_model()
    m2 = copy.deepcopy(m1)
    return (m1, make_opt(opt_name, m1.parameters(), **opt_kw)), (
        m2, make_opt(opt_name, m2.parameters(), **opt_kw))


def grads_of(model):
    return [None if p.grad is None else p.grad.numpy() for p in model.parameters()]


def assert_same_state(a, b, rtol=1e-5, atol=1e-6):
    """Parameters, buffers, `.grad` and the optimizer's state of two (model, opt) pairs."""
    (m1, o1), (m2, o2) = a, b
    for x, y in zip(m1.state_dict().values(), m2.state_dict().values(), strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=rtol, atol=atol)
    for x, y in zip(grads_of(m1), grads_of(m2), strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert len(s1) == len(s2)
    for x, y in zip(s1.values(), s2.values(), strict=True):
        if isinstance(x, dict):
            assert x == y
        else:
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=rtol, atol=atol)


def assert_no_variable(model, opt):
    """Nothing the user can reach holds a static Variable after the calls."""
    from runtime.core import is_variable
    for p in model.parameters():
        assert not is_variable(p) and not is_variable(p.grad)
    for b in model.buffers():
        assert not is_variable(b)
    for state in opt._accumulators.values():
        for t in state.values():
            assert not is_variable(t) and not is_variable(t._data)
    for v in opt.state_dict().values():
        assert not is_variable(v)


def convert(fn):
    return d2s.to_static(fn)


def same_training_state(m1, o1, m2, o2, where):
    """Parameters, which `.grad` is None, gradients, and the optimizer's state_dict (keys,
    their order, values) of two model/optimizer pairs are equal."""
    for (n, p), q in zip(m1.named_parameters(), m2.parameters(), strict=True):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{where}: {n}")
        assert (p.grad is None) == (q.grad is None), f"{where}: {n}.grad is None differs"
        if p.grad is not None:
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{where}: {n}.grad")
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert list(s1) == list(s2), where
    for k in s1:
        a, b = s1[k], s2[k]
        np.testing.assert_allclose(np.asarray(b.numpy() if hasattr(b, "numpy") else b),
                                   np.asarray(a.numpy() if hasattr(a, "numpy") else a),
                                   rtol=1e-5, atol=1e-6, err_msg=f"{where}: state {k}")
