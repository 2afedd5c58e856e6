"""Gradients written in place in a converted training step, between `backward()` and the
optimizer's step, as hand-written clipping and unscaling code does: `p.grad.set_value(...)`
(was "Tensor.set_value has no static form", and `hasattr(p.grad, "set_value")` was False in
converted code, so a guarded clip silently did not clip), in-place methods, and the same
writes through names bound before a tensor `if`. A gradient read inside a tensor `if` and
written there is refused at the user's line (a branch does not give out the whole step's
gradients), as setting `p.grad` there already is.

Eager vs static from the same parameters, several steps with momentum and weight decay,
inputs on both sides of the clipping threshold through one program."""
import math

import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import MLP, assert_same_state, batches, pair


def clip_step(model, opt):
    def train_step(x, y):
        loss = rt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        norm = math.sqrt(sum(float((p.grad ** 2).sum()) for p in model.parameters()))
        scale = min(1.0, 0.5 / (norm + 1e-6))  # (a Python number on every run)
        for p in model.parameters():
            if hasattr(p.grad, "set_value"):
                p.grad.set_value(p.grad * scale)
        opt.step()
        opt.clear_grad()
        return loss, norm
    return train_step


def halve_when_large(model, opt):
    def train_step(x, y):
        loss = rt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        grads = [p.grad for p in model.parameters()]
        if loss > 1.1:  # (a tensor: one program, both paths)
            for g in grads:
                g.set_value(g * 0.5)
        opt.step()
        opt.clear_grad()
        return loss
    return train_step


@pytest.mark.parametrize("make_step", [clip_step, halve_when_large])
def test_written_gradients_step_as_eager(make_step):
    (m1, o1), (m2, o2) = pair(MLP, "Momentum", weight_decay=0.01)
    eager, static = make_step(m1, o1), d2s.to_static(make_step(m2, o2))
    for x, y in batches(6, (5, 4), seed=3):
        want, got = eager(x, y), static(x, y)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for w, g in zip(want, got, strict=True):
            assert type(g) is type(w)
            np.testing.assert_allclose(np.asarray(g.numpy() if isinstance(g, rt.Tensor)
                                                  else g), np.asarray(
                w.numpy() if isinstance(w, rt.Tensor) else w), rtol=1e-5, atol=1e-6)
        assert_same_state((m1, o1), (m2, o2))
    assert len(static.program_cache) == 1


def test_set_value_keeps_the_gradients_dtype_and_checks_its_shape():
    (m1, o1), (m2, o2) = pair(MLP, "SGD")

    def step(model, opt, x, y, value):
        loss = rt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        model.fc2.bias.grad.set_value(value)
        g = model.fc2.bias.grad
        opt.step()
        opt.clear_grad()
        return g

    x, y = batches(1, (5, 4))[0]
    value = np.array([1, 2, 3], "int64")
    want = step(m1, o1, x, y, value)
    got = d2s.to_static(step)(m2, o2, x, y, value)
    assert got.dtype == want.dtype == rt.float32 and got.stop_gradient == want.stop_gradient
    np.testing.assert_allclose(got.numpy(), want.numpy())
    np.testing.assert_allclose(m2.fc2.bias.numpy(), m1.fc2.bias.numpy())
    with pytest.raises(ValueError, match="shape"):
        step(m1, o1, x, y, np.zeros([4], "float32"))
    with pytest.raises(ValueError, match="shape"):
        d2s.to_static(step)(m2, o2, x, y, np.zeros([4], "float32"))


def test_a_gradient_written_inside_a_tensor_if_changes_on_the_runs_that_take_it():
    """In place (`scale_`, `set_value`) and by assignment, in both branches: parameters,
    `.grad` and the optimizer's state as eager's after every call, through one program."""
    (m1, o1), (m2, o2) = pair(MLP, "Momentum", weight_decay=0.01)
    taken = []

    def step(model, opt, x, y):
        loss = rt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if loss > 1.1:
            for p in model.parameters():
                p.grad.scale_(0.5)
            model.fc2.bias.grad.set_value(model.fc2.bias.grad + 1.0)
        else:
            model.fc1.weight.grad = model.fc1.weight.grad * 2.0
        taken.append(bool(loss > 1.1))
        g = model.fc2.bias.grad * 1.0
        opt.step()
        opt.clear_grad()
        return loss, g

    static = d2s.to_static(step)
    for i, (x, y) in enumerate(batches(6, (5, 4), seed=2)):
        x = x * float(1 + i % 3)
        want, got = step(m1, o1, x, y), static(m2, o2, x, y)
        for a, b in zip(want, got, strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
        assert_same_state((m1, o1), (m2, o2))
    assert set(taken) == {True, False}
    assert len(static.program_cache) == 1


def test_a_gradient_written_in_place_in_a_graph_loop_is_refused_at_the_line():
    (_, _), (m2, o2) = pair(MLP, "SGD")

    def train_step(x, y, n):
        loss = rt.nn.functional.cross_entropy(m2(x), y)
        loss.backward()
        for _ in range(n):
            for p in m2.parameters():
                p.grad.scale_(0.5)
        o2.step()
        return loss

    x, y = batches(1, (5, 4))[0]
    with pytest.raises(RuntimeError, match=r"grad \(at .*test_gradient_writes.py:\d+\) "
                                           r"inside a loop whose condition is a tensor"):
        d2s.to_static(train_step)(x, y, rt.to_tensor(2))
