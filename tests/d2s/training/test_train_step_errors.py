"""What a converted training step cannot do raises at the user's line, and leaves no Variable
in `.grad` or in the optimizer's state (issue 17)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

from tests.d2s.breadth35.messages import INTERNAL

from .helpers import MLP, assert_no_variable, batches, make_opt


def _text(info) -> str:
    return "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))


def _setup():
    rt.seed(0)
    model = MLP()
    return model, make_opt("Adam", model.parameters()), nn.CrossEntropyLoss()


def test_backward_in_a_graph_loop():
    """(Under a tensor `if` it converts: test_backward_under_tensor_if.py.)"""
    model, opt, loss_fn = _setup()

    @d2s.to_static
    def step(x, y, n):
        total = rt.zeros([])
        for _ in range(n):  # (a tensor trip count: a graph loop)
            loss = loss_fn(model(x), y)
            loss.backward()
            total = total + loss
        opt.step()
        return total

    x, y = batches(1, (5, 4))[0]
    before = [p.numpy().copy() for p in model.parameters()]
    with pytest.raises(RuntimeError) as info:
        step(x, y, rt.to_tensor(2))
    text = _text(info)
    assert "backward()" in text and "inside a loop whose condition is a tensor" in text
    assert "Python loop" in text
    assert "test_train_step_errors.py" in text and "loss.backward()" in text  # the user's line
    assert not INTERNAL.search(text), text  # (it named the trace's 't12')
    for b, p in zip(before, model.parameters(), strict=True):  # nothing ran
        np.testing.assert_array_equal(b, p.numpy())
        assert p.grad is None
    assert_no_variable(model, opt)


def test_backward_twice_through_one_graph():
    """A second backward() through the graph the first one freed raises eager's error at the
    user's line (a second backward() through another graph runs: tests/d2s/training/
    test_backward_per_micro_batch.py)."""
    model, opt, loss_fn = _setup()

    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        (loss * 2).backward()
        return loss

    with pytest.raises(RuntimeError) as eager:
        step(*batches(1, (5, 4))[0])
    model.clear_gradients()
    with pytest.raises(RuntimeError) as info:
        d2s.to_static(step)(*batches(1, (5, 4))[0])
    text = _text(info)
    assert str(eager.value) in text and "already freed" in text
    assert "(loss * 2).backward()" in text  # the user's line
    assert not INTERNAL.search(text), text
    assert_no_variable(model, opt)


def test_gradient_for_an_argument():
    model, opt, loss_fn = _setup()

    @d2s.to_static
    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss

    x, y = batches(1, (5, 4))[0]
    x.stop_gradient = False
    with pytest.raises(RuntimeError, match="'x'.*require a gradient"):
        step(x, y)


def test_a_gradient_the_step_did_not_expect():
    """A parameter the loss does not reach had no gradient when the step was converted; one
    set later would be used by an eager step, so the program raises instead of skipping it."""
    model, opt, loss_fn = _setup()
    extra = rt.Parameter(np.ones([2], "float32"), name="unused_extra")
    opt2 = rt.optimizer.SGD(0.1, parameters=list(model.parameters()) + [extra])

    @d2s.to_static
    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt2.step()
        opt2.clear_grad()
        return loss

    x, y = batches(1, (5, 4))[0]
    step(x, y)
    extra.grad = rt.ones([2])
    with pytest.raises(RuntimeError, match="unused_extra has a gradient now, but had none"):
        step(x, y)
    assert_no_variable(model, opt2)


def test_returned_loss_cannot_be_backpropagated_again():
    """Eager frees the graph after backward(); the converted step returns the loss without a
    gradient path, so a second backward() outside fails too."""
    model, opt, loss_fn = _setup()

    @d2s.to_static
    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    loss = step(*batches(1, (5, 4))[0])
    with pytest.raises(RuntimeError):
        loss.backward()


def test_step_in_a_graph_loop():
    model, opt, loss_fn = _setup()

    @d2s.to_static
    def step(x, y, n):
        loss = loss_fn(model(x), y)
        loss.backward()
        for _ in range(n):
            opt.step()
        return loss

    with pytest.raises(RuntimeError) as info:
        step(*batches(1, (5, 4))[0], rt.to_tensor(2))
    text = _text(info)
    assert "optimizer.step()" in text and "graph loop" in text
    assert "opt.step()" in text  # (the user's line)
    assert all(p.grad is None for p in model.parameters())
    assert_no_variable(model, opt)
