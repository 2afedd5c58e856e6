"""Each item of a list that a graph loop changes by `insert`, slicing or concatenation keeps
its own `stop_gradient`, as eager's items do: a history of states where every other state is
detached (truncated backpropagation through time), returned whole and read by index. Several
trip counts run through ONE converted program; values against a NumPy reference, gradients
against finite differences of it (issue 33)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


class History(rt.nn.Layer):
    """Unrolls a cell `steps` times; each state is kept, every other one detached, in a
    history that `remember` updates."""

    def __init__(self):
        super().__init__()
        self.cell = rt.nn.Linear(3, 3)

    def forward(self, x, steps):
        history = [x]  # (an input: stop_gradient=True)
        h = x
        for i in range(steps):
            h = rt.tanh(self.cell(h))
            history = self.remember(history, h if i % 2 == 0 else h.detach())
        return history, history[0], history[-1]


class NewestFirst(History):
    def remember(self, history, state):
        history.insert(0, state)
        return history


class Appended(History):
    def remember(self, history, state):
        return history + [state]


class LastThree(History):
    def remember(self, history, state):
        return history[-2:] + [state]


class Prepended(History):
    def remember(self, history, state):
        return [state] + history[:3]


def _remember(kind, history, item):
    return {NewestFirst: lambda: [item] + history, Appended: lambda: history + [item],
            LastThree: lambda: history[-2:] + [item],
            Prepended: lambda: [item] + history[:3]}[kind]()


def _reference(kind, w, b, x, steps):
    """The states of the history, each as (value, detached)."""
    history = [(x, True)]
    h = x
    for i in range(steps):
        h = np.tanh(h @ w + b)
        history = _remember(kind, history, (h, i % 2 == 1))
    return history


def _loss_reference(kind, w, b, x, steps):
    """The sum of the means of the history's states that keep a gradient path."""
    return sum(v.mean() for v, detached in _reference(kind, w, b, x, steps) if not detached)


@pytest.mark.parametrize("kind", [NewestFirst, Appended, LastThree, Prepended],
                         ids=lambda k: k.__name__)
def test_each_item_keeps_its_own_stop_gradient(kind):
    rt.seed(12)
    eager, static = kind(), kind()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    x = np.random.default_rng(0).standard_normal((2, 3))
    w, b = (p.numpy().astype("float64") for p in (eager.cell.weight, eager.cell.bias))
    for steps in (0, 1, 2, 4, 1):  # one program for all
        want = _reference(kind, w, b, x, steps)
        grads = []
        for layer in (eager, static):
            layer.clear_gradients()
            history, first, last = layer(rt.to_tensor(x.astype("float32")),
                                         rt.to_tensor(steps))
            assert len(history) == len(want)
            for k, (t, (value, detached)) in enumerate(zip(history, want)):
                assert t.stop_gradient is detached, f"item {k} after {steps} trips"
                np.testing.assert_allclose(t.numpy(), value, rtol=1e-5, atol=1e-6)
            assert (first.stop_gradient, last.stop_gradient) == (want[0][1], want[-1][1])
            kept = [t.mean() for t in history if not t.stop_gradient]
            if kept:
                rt.add_n(kept).backward()
            grads.append(layer.cell.weight.grad)
        if all(detached for _, detached in want):
            assert grads == [None, None]
            continue
        expected = numeric_grad(lambda v, n=steps: _loss_reference(kind, v, b, x, n), w)
        for g in grads:
            np.testing.assert_allclose(g.numpy(), expected, rtol=1e-3, atol=1e-6)
    assert len(static.forward.program_cache) == 1
