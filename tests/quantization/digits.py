"""LeNet on scikit-learn's 8x8 digits (as `d2s demo`), shared by the quantization tests."""
from __future__ import annotations

import numpy as np

import runtime as rt
from d2s.demo import load_digits_split
from examples.models import LeNet

BATCH = 32


def data():
    return load_digits_split()


def batches(x, y, seed: int, n: int | None = None):
    order = np.random.RandomState(seed).permutation(len(y))
    steps = len(y) // BATCH if n is None else n
    for i in range(steps):
        idx = order[(i * BATCH) % (len(y) - BATCH):][:BATCH]
        yield rt.to_tensor(x[idx]), rt.to_tensor(y[idx])


def fit(model, x, y, epochs: int, lr: float, seed: int = 0):
    opt = rt.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    loss_fn = rt.nn.CrossEntropyLoss()
    model.train()
    for epoch in range(epochs):
        for xb, yb in batches(x, y, seed + epoch):
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            opt.clear_grad()
    return model.eval()


def logits(model, x) -> np.ndarray:
    with rt.no_grad():
        return np.asarray(model(rt.to_tensor(x)).numpy())


def accuracy(model, x, y) -> float:
    """Percent of test digits classified correctly."""
    return float((logits(model, x).argmax(1) == y).mean() * 100)


def trained_lenet():
    """LeNet trained 5 epochs at lr 0.003 then 2 at 0.001 (about 96% on the test digits)."""
    rt.seed(0)
    x, y, xt, yt = data()
    model = fit(LeNet(image_size=8), x, y, 5, lr=0.003)
    model = fit(model, x, y, 2, lr=0.001, seed=20)
    return model, (x, y, xt, yt)
