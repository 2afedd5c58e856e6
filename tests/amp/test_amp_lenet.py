"""LeNet on the 8x8 digits trained in float32, O1/O2 x float16/bfloat16 with a default
GradScaler: each mixed-precision run ends no more than 1.5 points below float32's test
accuracy, and no more than 3 above (lower precision acts as noise on a small set: measured at
3312902, fp32 91.92, O2 bf16 93.59, O1 bf16 93.31) (about 50 s on 2 cores: slow)."""
from __future__ import annotations

import os
import sys
import warnings

import pytest

import runtime as rt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "quantization"))
from digits import accuracy, batches, data  # noqa: E402

from examples.models import LeNet  # noqa: E402

STATES = [dict(level="O1"), dict(level="O1", dtype="bfloat16"),
          dict(level="O2", dtype="float16"), dict(level="O2", dtype="bfloat16")]


def train(state, epochs=5, lr=0.003):
    rt.seed(0)
    x, y, xt, yt = data()
    model = LeNet(image_size=8)
    opt = rt.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    if state and state["level"] == "O2":
        model, opt = rt.amp.decorate(model, opt, level="O2", dtype=state["dtype"])
    scaler = rt.amp.GradScaler()
    loss_fn = rt.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for xb, yb in batches(x, y, epoch):
            with rt.amp.auto_cast(enable=state is not None, **(state or {})):
                loss = loss_fn(model(xb), yb)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.clear_grad()
    model.eval()
    with rt.amp.auto_cast(enable=state is not None, **(state or {})):
        return accuracy(model, xt, yt)


@pytest.mark.slow
def test_mixed_precision_lenet_tracks_float32():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = train(None)
        assert base > 88
        for state in STATES:
            acc = train(state)
            assert -1.5 <= acc - base <= 3.0, (state, acc, base)
