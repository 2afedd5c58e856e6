"""The model, data and training loop that the 2-process run (mpi_worker.py) and its
single-process reference (test_mpi.py) share, so both train exactly the same thing."""
from __future__ import annotations

import numpy as np

import runtime as rt
from runtime import nn
from runtime.nn import functional as F

BATCH = 6  # per rank
STEPS = 4
WORLD = 2


def make_dataset(steps: int = STEPS, batch: int = BATCH, world: int = WORLD):
    """Images whose global step k is shifted by +1 (k even) or -1 (k odd): the converted
    model's `if rt.mean(x) > 0` takes a different branch of one program on alternate steps,
    and the same branch on every rank within a step."""
    rng = np.random.RandomState(0)
    n = steps * batch * world
    x = rng.randn(n, 1, 6, 6).astype("float32") * 0.5
    for k in range(steps):
        x[k * batch * world:(k + 1) * batch * world] += 1.0 if k % 2 == 0 else -1.0
    y = rng.randint(0, 5, size=n).astype("int64")
    return rt.io.TensorDataset([rt.to_tensor(x), rt.to_tensor(y)])


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(1, 3, 3)
        self.hidden = nn.Linear(3 * 4 * 4, 16)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        h = F.relu(self.conv(x))
        h = self.hidden(rt.flatten(h, start_axis=1))
        if rt.mean(x) > 0:
            h = F.relu(h)
        else:
            h = rt.tanh(h) * 2.0
        return self.head(h)


def make_optimizer(kind: str, parameters):
    if kind == "momentum":
        return rt.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=parameters)
    return rt.optimizer.Adam(learning_rate=0.01, parameters=parameters)


def train(model, opt, loader) -> list:
    losses = []
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def params_of(layer) -> dict:
    return {name: p.numpy() for name, p in layer.named_parameters()}
