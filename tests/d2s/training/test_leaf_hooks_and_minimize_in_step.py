"""A converted training step treats its parameters' `register_hook` hooks and
`opt.minimize(loss)` as eager code does (issue 33: both were silent differences).

- Eager `backward()` passes a leaf's gradient through its hooks before adding it to `.grad`
  (pruning masks `w.register_hook(lambda g: g * mask)`, per-parameter clipping). A step whose
  backward runs inside its program ignored them, so masked weights moved. Now a hook present
  when the step is traced is called when the program runs (a hook removed since is not), and
  a hook registered on a parameter after the step was traced makes the next call trace again.
- Paddle's dygraph `opt.minimize(loss)` applies the gradients `loss.backward()` left in
  `.grad` (it computes none). A converted step computed the gradient of `loss` again: without
  a backward() it updated where eager does not, and after micro-batch accumulation it applied
  the last loss's gradient only.

Eager vs converted from the same start, several steps, momentum and weight decay (which move
a parameter whose masked gradient is zero the same way in both), the whole training state
compared (helpers.same_training_state), and a NumPy reference for the masked update."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

from .helpers import MLP, batches, make_opt, same_training_state

F = nn.functional


def _pair(opt_name="Momentum", **kw):
    rt.seed(3)
    m1 = MLP()
    m2 = copy.deepcopy(m1)
    return (m1, make_opt(opt_name, m1.parameters(), **kw)), (
        m2, make_opt(opt_name, m2.parameters(), **kw))


def _masks(model):
    """A pruning mask per weight matrix (half its entries kept)."""
    rng = np.random.default_rng(0)
    return {id(p): rt.to_tensor((rng.random(p.shape) < 0.5).astype("float32"))
            for p in model.parameters() if len(p.shape) == 2}


def _prune(model, masks):
    handles = []
    for p in model.parameters():
        if id(p) in masks:
            mask = masks[id(p)]
            handles.append(p.register_hook(lambda g, mask=mask: g * mask))
    return handles


def _step(model, opt):
    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return train_step


def test_pruning_masks_registered_before_the_first_call():
    (m1, o1), (m2, o2) = _pair(weight_decay=0.0)
    w_before = m1.fc1.weight.numpy().copy()
    _prune(m1, _masks(m1))
    _prune(m2, {id(q): _masks(m1)[id(p)] for p, q in zip(m1.parameters(), m2.parameters())
                if id(p) in _masks(m1)})
    eager, static = _step(m1, o1), d2s.to_static(_step(m2, o2))
    for k, (x, y) in enumerate(batches(4, (6, 4))):
        np.testing.assert_allclose(static(x, y).numpy(), eager(x, y).numpy(), rtol=1e-5)
        same_training_state(m1, o1, m2, o2, f"step {k}")
    mask = _masks(m1)[id(m1.fc1.weight)].numpy()
    # (NumPy: the entries the mask drops never move, without weight decay)
    np.testing.assert_array_equal(m2.fc1.weight.numpy()[mask == 0], w_before[mask == 0])
    assert (m2.fc1.weight.numpy()[mask == 1] != w_before[mask == 1]).all()
    assert static.program_cache.traces == 1


def test_a_hook_registered_after_the_step_was_traced_and_one_removed():
    (m1, o1), (m2, o2) = _pair(weight_decay=0.01)
    eager, static = _step(m1, o1), d2s.to_static(_step(m2, o2))
    data = batches(6, (5, 4), seed=1)
    for k, (x, y) in enumerate(data[:2]):
        static(x, y), eager(x, y)
        same_training_state(m1, o1, m2, o2, f"step {k}")
    h1 = m1.fc2.weight.register_hook(lambda g: g * 0.5)  # (after two converted calls)
    h2 = m2.fc2.weight.register_hook(lambda g: g * 0.5)
    for k, (x, y) in enumerate(data[2:4], 2):
        static(x, y), eager(x, y)
        same_training_state(m1, o1, m2, o2, f"step {k}")
    assert static.program_cache.traces == 2  # (traced again once, with the hook)
    h1.remove()
    h2.remove()
    for k, (x, y) in enumerate(data[4:], 4):
        static(x, y), eager(x, y)
        same_training_state(m1, o1, m2, o2, f"step {k}")


def test_hooks_with_the_backward_under_a_tensor_if():
    (m1, o1), (m2, o2) = _pair("Adam")
    for m in (m1, m2):
        m.fc1.bias.register_hook(lambda g: rt.clip(g, -0.01, 0.01))

    def make(model, opt):
        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            if loss < 1.2:  # (a tensor condition: the update only on some batches)
                loss.backward()
                opt.step()
                opt.clear_grad()
            return loss
        return train_step
    eager, static = make(m1, o1), d2s.to_static(make(m2, o2))
    taken = []
    for k, (x, y) in enumerate(batches(6, (4, 4), seed=2)):
        loss = eager(x, y)
        np.testing.assert_allclose(static(x, y).numpy(), loss.numpy(), rtol=1e-5)
        taken.append(float(loss) < 1.2)
        same_training_state(m1, o1, m2, o2, f"step {k}")
    assert any(taken) and not all(taken), taken  # (both paths through one program)
    assert static.program_cache.traces == 1


@pytest.mark.parametrize("opt_name", ["SGD", "Momentum", "AdamW"])
def test_minimize_applies_the_gradients_backward_left(opt_name):
    (m1, o1), (m2, o2) = _pair(opt_name)

    def make(model, opt):
        def accumulate_then_minimize(xs, ys, with_backward):
            loss = 0.0
            for i in range(2):  # (two micro-batches: their gradients add up in `.grad`)
                part = F.cross_entropy(model(xs[i]), ys[i])
                if with_backward:
                    part.backward()
                loss = loss + part
            opt.minimize(loss)  # (Paddle's dygraph minimize: no backward of its own)
            opt.clear_grad()
            return loss
        return accumulate_then_minimize
    eager, static = make(m1, o1), d2s.to_static(make(m2, o2))
    data = batches(6, (3, 4), seed=4)
    for k in range(3):
        xs, ys = [data[2 * k][0], data[2 * k + 1][0]], [data[2 * k][1], data[2 * k + 1][1]]
        for with_backward in (True, False):
            np.testing.assert_allclose(static(xs, ys, with_backward).numpy(),
                                       eager(xs, ys, with_backward).numpy(), rtol=1e-5)
            same_training_state(m1, o1, m2, o2, f"step {k}, backward {with_backward}")
