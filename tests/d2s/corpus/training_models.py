"""Models and builders the training-step cases (`cases_wild5_training.py`) share: an MLP
with a backbone and a head, a two-head model whose router is a tensor `if`, a BatchNorm net,
optimizers as trainers configure them, and a scheduled Momentum."""
from __future__ import annotations

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn


class MLP(nn.Layer):
    def __init__(self, hidden=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, hidden), nn.Tanh())
        self.head = nn.Linear(hidden, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


class TwoHeads(nn.Layer):
    """A router picks one head per batch (a tensor `if`): the other gets no gradient."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.head_a = nn.Linear(6, 3)
        self.head_b = nn.Linear(6, 3)

    def forward(self, x):
        h = F.relu(self.body(x))
        return self.head_a(h) if x.mean() > 0 else self.head_b(h)


class BNNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1D(6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        return self.out(F.relu(self.bn(self.fc(x))))


def momentum(model, **kw):
    return paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9,
                                     parameters=model.parameters(), **kw)


def adam(model, **kw):
    return paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters(), **kw)


def adamw(model, **kw):
    return paddle.optimizer.AdamW(learning_rate=0.01, parameters=model.parameters(),
                                  weight_decay=0.05, **kw)


def built(make_model, make_opt, *extra):
    def setup():
        model = make_model()
        return (model, make_opt(model), *[e() for e in extra])
    return setup


def scheduled(kind):
    def setup():
        model = MLP()
        if kind == "step":
            sched = paddle.optimizer.lr.StepDecay(learning_rate=0.1, step_size=2, gamma=0.5)
        else:
            sched = paddle.optimizer.lr.LinearWarmup(
                paddle.optimizer.lr.CosineAnnealingDecay(0.05, T_max=6), warmup_steps=2,
                start_lr=0.0, end_lr=0.05)
        opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=0.9,
                                        parameters=model.parameters(), weight_decay=1e-4)
        return model, opt, sched
    return setup
