"""Static training (one program per step: forward, append_backward, optimizer update ops)
matches eager training step for step, from identical parameters (float64)."""
import numpy as np
import pytest

import runtime as rt
from runtime import nn, static


def _mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def _cnn():
    return nn.Sequential(nn.Conv2D(1, 3, 3, padding=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(3 * 6 * 6, 4))


def _loss(out, y):
    d = out - y
    return rt.mean(d * d)


def _params(model):
    return [p.numpy().copy() for p in model.parameters()]


def _set(model, values):
    for p, v in zip(model.parameters(), values):
        p.set_value(v)


def _train_eager(model, opt, xs, ys):
    losses = []
    for x, y in zip(xs, ys):
        loss = _loss(model(rt.to_tensor(x)), rt.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def _train_static(model, opt, xs, ys):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None] + list(xs[0].shape[1:]), "float64")
        y = static.data("y", [None, 4], "float64")
        loss = _loss(model(x), y)
        opt.minimize(loss)
    exe = static.Executor()
    return [float(exe.run(main, {"x": a, "y": b}, [loss])[0]) for a, b in zip(xs, ys)]


@pytest.mark.parametrize("make,shape", [(_mlp, (8,)), (_cnn, (1, 6, 6))])
@pytest.mark.parametrize("opt_name", ["SGD", "Momentum", "Adam", "AdamW"])
def test_static_training_matches_eager(make, shape, opt_name):
    if make is _cnn and not hasattr(nn, "Conv2D"):
        pytest.skip("Conv2D not available")
    rng = np.random.RandomState(0)
    batches = [(rng.randn(5, *shape), rng.randn(5, 4)) for _ in range(2)]
    xs = [batches[i % 2][0] for i in range(20)]
    ys = [batches[i % 2][1] for i in range(20)]
    model = make()
    model.to(dtype="float64")
    init = _params(model)
    opt = getattr(rt.optimizer, opt_name)(learning_rate=0.05, parameters=model.parameters())
    eager = _train_eager(model, opt, xs, ys)
    eager_final = _params(model)
    _set(model, init)
    opt = getattr(rt.optimizer, opt_name)(learning_rate=0.05, parameters=model.parameters())
    static_losses = _train_static(model, opt, xs, ys)
    np.testing.assert_allclose(static_losses, eager, rtol=1e-5, atol=1e-10)
    assert eager[-1] < eager[1]  # it learns (the two batches alternate)
    # The static learning rate is a float32 variable (eager uses the Python float), so
    # parameters agree to ~1e-7 absolute rather than bit for bit.
    for a, b in zip(_params(model), eager_final, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
