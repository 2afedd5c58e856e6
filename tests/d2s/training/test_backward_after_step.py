"""A converted step that updates parameters and then computes another loss from them and
calls `backward()` again (a GAN's critic steps, `n_critic` inner steps, a second micro-batch
after an update, pruning `p.set_value(p * mask)` before the forward): eager's Parameter is one
leaf updated in place, so the later `backward()` gives it the gradient of the new forward.
The converted step had read the written value, which has no gradient path to the parameter:
the second update used a zero gradient (silently one step short). Eager vs converted from the
same start over several calls whose inputs take both sides of a tensor `if`; parameters,
`.grad` (None or its value) and the optimizer state after every call."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from runtime.nn import functional as F

from .helpers import MLP, make_opt, same_training_state


def _inner_steps(model, opt, x, y, n_inner=3):
    """`n_inner` updates in one call (a Python loop: unrolled)."""
    losses = []
    for _ in range(n_inner):
        loss = F.cross_entropy(model(x), y)
        opt.clear_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _second_batch_after_a_tensor_if(model, opt, x, y):
    """An update, then a second loss whose form a tensor `if` picks, accumulated without
    clearing (the first backward's gradient was consumed by the step: eager adds to it)."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    h = model(x * 0.5)
    if h.mean() > 0:
        loss2 = (h ** 2).mean()
    else:
        loss2 = h.abs().sum()
    loss2.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss.item(), loss2


def _prune_then_train(model, opt, x, y):
    """Magnitude pruning written through `set_value` under no_grad, then a step on the
    pruned weights: the mask multiplies no gradient (eager: the Parameter is a leaf)."""
    with rt.no_grad():
        for p in model.parameters():
            if p.ndim == 2:
                p.set_value(p * (p.abs() > 0.2).astype("float32"))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def _data(seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(4):
        x = rng.standard_normal((5, 4)).astype("float32") * (1.0 if i % 2 else -2.0)
        out.append((x, rng.integers(0, 3, 5).astype("int64")))
    return out


@pytest.mark.parametrize("step", [_inner_steps, _second_batch_after_a_tensor_if,
                                  _prune_then_train])
@pytest.mark.parametrize("opt_name, kw", [("SGD", {}), ("Momentum", {"weight_decay": 0.01}),
                                          ("Adam", {})])
def test_backward_after_an_update_in_one_step(step, opt_name, kw):
    rt.seed(0)
    m1 = MLP()
    m2 = copy.deepcopy(m1)
    o1 = make_opt(opt_name, m1.parameters(), **kw)
    o2 = make_opt(opt_name, m2.parameters(), **kw)
    static = d2s.to_static(step)
    for i, (x, y) in enumerate(_data(3)):
        want = step(m1, o1, rt.to_tensor(x), rt.to_tensor(y))
        got = static(m2, o2, rt.to_tensor(x), rt.to_tensor(y))
        where = f"{step.__name__} {opt_name} call {i}"
        want = want if isinstance(want, (list, tuple)) else [want]
        got = got if isinstance(got, (list, tuple)) else [got]
        assert len(got) == len(want), where
        for a, b in zip(want, got, strict=True):
            assert type(a) is type(b), where
            np.testing.assert_allclose(np.asarray(b.numpy() if hasattr(b, "numpy") else b),
                                       np.asarray(a.numpy() if hasattr(a, "numpy") else a),
                                       rtol=1e-5, atol=1e-6, err_msg=where)
        same_training_state(m1, o1, m2, o2, where)
    assert len(static.program_cache) == 1


class _Critic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 1)

    def forward(self, x):
        return self.fc2(F.leaky_relu(self.fc1(x), 0.2))


def test_critic_steps_with_a_gradient_penalty():
    """WGAN-GP's `n_critic` loop: `rt.grad(create_graph=True)` of the critic on interpolates,
    then backward and an Adam step, twice per call."""
    def critic_steps(D, opt, real, fake, alpha, n_critic=2):
        for _ in range(n_critic):
            interp = alpha * real + (1 - alpha) * fake
            interp.stop_gradient = False
            out = D(interp)
            g = rt.grad(out, interp, grad_outputs=rt.ones_like(out), create_graph=True)[0]
            gp = ((g.norm(2, axis=1) - 1) ** 2).mean()
            loss = D(fake).mean() - D(real).mean() + 10.0 * gp
            opt.clear_grad()
            loss.backward()
            opt.step()
        return loss

    rt.seed(0)
    d1 = _Critic()
    d2 = copy.deepcopy(d1)
    o1 = rt.optimizer.Adam(learning_rate=1e-2, beta1=0.0, beta2=0.9, parameters=d1.parameters())
    o2 = rt.optimizer.Adam(learning_rate=1e-2, beta1=0.0, beta2=0.9, parameters=d2.parameters())
    static = d2s.to_static(critic_steps)
    rng = np.random.default_rng(1)
    alpha = np.linspace(0.1, 0.9, 5, dtype="float32").reshape(5, 1)
    for i in range(3):
        real = rng.standard_normal((5, 4)).astype("float32")
        fake = rng.standard_normal((5, 4)).astype("float32") * 2
        want = critic_steps(d1, o1, rt.to_tensor(real), rt.to_tensor(fake), rt.to_tensor(alpha))
        got = static(d2, o2, rt.to_tensor(real), rt.to_tensor(fake), rt.to_tensor(alpha))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        same_training_state(d1, o1, d2, o2, f"call {i}")
