"""Gradient accumulation with one `loss.backward()` per micro-batch inside a converted step:
each backward() adds its loss's gradients into `.grad` as eager autograd does (a second
backward() through a graph an earlier one freed raises eager's error:
test_train_step_errors.py). Eager vs converted vs NumPy, with clipping, momentum and weight
decay; a tensor `if` choosing which head a loss reaches."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

F = nn.functional
W0 = np.array([[0.5], [-1.0], [2.0]], "float32")


class Regressor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([3, 1], default_initializer=nn.initializer.Assign(W0))
        self.b = self.create_parameter([1], is_bias=True)
        self.unused = self.create_parameter([2])  # no loss reaches it: .grad stays None


def accumulate_step(model, opt, max_norm):
    """One optimizer step over the micro-batches of a batch, as training scripts write it:
    backward() per micro-batch, a global-norm clip by hand, a Python float returned."""
    def train_step(xs, ys):
        total = 0.0
        for x, y in zip(xs, ys):
            loss = F.mse_loss(x @ model.w + model.b, y) / len(xs)
            loss.backward()
            total += loss.item()
        norm = rt.sqrt(sum((p.grad ** 2).sum() for p in (model.w, model.b)))
        coef = rt.clip(max_norm / (norm + 1e-6), max=1.0)  # (torch's clip_grad_norm_)
        for p in (model.w, model.b):
            p.grad.set_value(p.grad * coef)
        opt.step()
        opt.clear_grad()
        return total
    return train_step


def _data(seed, n_micro):
    rng = np.random.default_rng(seed)
    return ([rng.standard_normal((2, 3)).astype("float32") for _ in range(n_micro)],
            [rng.standard_normal((2, 1)).astype("float32") for _ in range(n_micro)])


def _reference(steps, max_norm, lr=0.1, momentum=0.9, decay=0.01):
    """NumPy: the same steps (Paddle Momentum: v = mu * v + (g + decay * p); p -= lr * v)."""
    w, b = W0.astype("float64"), np.zeros(1)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    totals = []
    for xs, ys in steps:
        gw, gb, total = np.zeros_like(w), np.zeros_like(b), 0.0
        for x, y in zip(xs, ys):
            r = x @ w + b - y
            total += float((r ** 2).mean() / len(xs))
            gw += 2 * x.T @ r / r.size / len(xs)
            gb += 2 * r.sum(0) / r.size / len(xs)
        norm = np.sqrt((gw ** 2).sum() + (gb ** 2).sum())
        coef = min(max_norm / (norm + 1e-6), 1.0)
        gw, gb = gw * coef, gb * coef
        vw, vb = momentum * vw + gw + decay * w, momentum * vb + gb + decay * b
        w, b = w - lr * vw, b - lr * vb
        totals.append(total)
    return totals, w, b


@pytest.mark.parametrize("max_norm", [0.05, 100.0])
def test_micro_batch_backward_matches_eager_and_numpy(max_norm):
    eager = Regressor()
    static = copy.deepcopy(eager)
    runs = {}
    for name, model in (("eager", eager), ("static", static)):
        opt = rt.optimizer.Momentum(0.1, momentum=0.9, parameters=model.parameters(),
                                    weight_decay=0.01)
        step = accumulate_step(model, opt, max_norm)
        if name == "static":
            step = d2s.to_static(step)
        runs[name] = [step([rt.to_tensor(x) for x in xs], [rt.to_tensor(y) for y in ys])
                      for xs, ys in [_data(s, 2) for s in range(4)]]
    totals, w, b = _reference([_data(s, 2) for s in range(4)], max_norm)
    for got in runs.values():
        assert all(type(t) is float for t in got)
        np.testing.assert_allclose(got, totals, rtol=1e-4)
    for model in (eager, static):
        np.testing.assert_allclose(model.w.numpy(), w, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(model.b.numpy(), b, rtol=1e-4, atol=1e-6)
        assert model.w.grad is not None and not model.w.grad.numpy().any()  # (cleared)
        assert model.unused.grad is None


def test_losses_of_two_heads_each_with_its_backward():
    """Two losses on two graphs, one backward() each, the second head's loss taken only when
    a tensor says so: `.grad` as eager's, None for the head no loss reached on this call."""
    rt.seed(1)
    enc, head_a, head_b = nn.Linear(3, 4), nn.Linear(4, 1), nn.Linear(4, 1)
    params = [*enc.parameters(), *head_a.parameters(), *head_b.parameters()]

    def step(x):
        la = head_a(enc(x)).mean()
        la.backward()
        h = enc(x * 2)
        if h.mean() > 0:
            lb = head_b(h).mean()
        else:
            lb = (h ** 2).mean()
        lb.backward()
        return la, lb

    converted = d2s.to_static(step)
    for x in (np.full((2, 3), 1.0, "float32"), np.full((2, 3), -1.0, "float32")):
        got = {}
        for name, fn in (("eager", step), ("static", converted)):
            for p in params:
                p.grad = None
            la, lb = fn(rt.to_tensor(x))
            got[name] = ([float(la), float(lb)], [(str(v.dtype), v.stop_gradient, v.shape)
                                                  for v in (la, lb)],
                         [None if p.grad is None else p.grad.numpy().copy() for p in params])
        np.testing.assert_allclose(got["eager"][0], got["static"][0], rtol=1e-5)
        assert got["eager"][1] == got["static"][1]
        for a, b in zip(got["eager"][2], got["static"][2], strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert len(converted.program_cache) == 1  # (one program took both paths)


def test_retain_graph_lets_a_second_backward_share_the_forward():
    """`backward(retain_graph=True)`, then a second loss from the same forward: both add."""
    rt.seed(2)
    layer = nn.Linear(3, 2)

    def step(x):
        h = layer(x)
        h.sum().backward(retain_graph=True)
        (h ** 2).sum().backward()
        return h

    x = np.arange(6, dtype="float32").reshape(2, 3) / 6
    grads, outs = [], []
    for fn in (step, d2s.to_static(step)):
        layer.clear_gradients()
        h = fn(rt.to_tensor(x))
        outs.append((str(h.dtype), h.stop_gradient, h.shape))
        grads.append([p.grad.numpy() for p in layer.parameters()])
    assert outs[0] == outs[1]
    h = x @ layer.weight.numpy() + layer.bias.numpy()
    dh = 1 + 2 * h
    np.testing.assert_allclose(grads[0][0], x.T @ dh, rtol=1e-5)
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_backward_after_a_freeing_grad_raises_as_eager():
    rt.seed(3)
    layer = nn.Linear(3, 1)
    x = rt.to_tensor(np.ones((2, 3), "float32"))

    def step(x):
        loss = layer(x).sum()
        rt.grad(loss, layer.weight)
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="already freed") as eager:
        step(x)
    with pytest.raises(RuntimeError, match="already freed") as static:
        d2s.to_static(step)(x)
    assert str(eager.value) in str(static.value)
    assert "loss.backward()" in "\n".join(getattr(static.value, "__notes__", [])) + str(
        static.value)
