"""Forms that cannot be a graph fail with an error naming the user's line, the construct and
the fix, and never suggest decorating the (already converted) function."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def item_drives_python(x):
    if x.sum().item() > 0:
        return x
    return -x


def numpy_in_graph(x):
    return x.numpy() + 1


def numpy_sort_in_graph(x):
    return rt.to_tensor(np.sort(x.numpy()))  # (NumPy's functions of it are ops too)


def numpy_math_in_graph(x):
    return rt.to_tensor(np.argwhere(x.numpy()))  # (a shape only the values decide)


def backward_inside(x):
    loss = (x * x).sum()
    loss.backward()
    return loss


class Trainer(rt.nn.Layer):
    """A Layer whose forward runs a whole training step (a common first try)."""

    def __init__(self, clear_only=False):
        super().__init__()
        self.fc = rt.nn.Linear(2, 1)
        self.opt = rt.optimizer.SGD(learning_rate=0.1, parameters=self.fc.parameters())
        self.clear_only = clear_only

    def forward(self, x):
        loss = self.fc(x).sum()
        if not self.clear_only:
            self.opt.step()
        self.opt.clear_grad()
        return loss


def test_item_and_numpy_stay_in_the_graph():
    """(Issue 15: as in Paddle's converted code, `.item()` and `.numpy()` keep the value in
    the graph, so a condition on them is a graph op.)"""
    for fn in (item_drives_python, numpy_in_graph, numpy_sort_in_graph):
        f = d2s.to_static(fn)
        for v in (1.0, -1.0):
            x = rt.to_tensor([v, 2.0 * v])
            got, want = f(x), fn(x)
            assert type(got) is type(want)  # (`x.numpy() + 1`: eager's NumPy array)
            assert getattr(got, "stop_gradient", None) == getattr(want, "stop_gradient", None)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want))
        assert len(f.program_cache) == 1


@pytest.mark.parametrize("fn,cls,construct,fix", [
    # (`rt.to_tensor(x.tolist())` converts: issue 35; a NumPy function the program lacks
    # cannot)
    (numpy_math_in_graph, TypeError, "NumPy array", "keep it a tensor"),
    # (a whole training step converts; a gradient for an argument cannot: issue 17)
    (backward_inside, RuntimeError, "backward()", "with stop_gradient=True"),
])
def test_error_names_line_construct_and_fix(fn, cls, construct, fix):
    x = rt.ones([2])
    x.stop_gradient = False
    with pytest.raises(cls) as info:
        d2s.to_static(fn)(x)
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert construct in text and fix.lower() in text.lower()
    assert "test_not_a_graph.py" in text  # the user's line
    assert "decorat" not in text.lower()


@pytest.mark.parametrize("clear_only", [False, True])
@pytest.mark.parametrize("grads_before", [False, True])
def test_optimizer_step_inside_a_forward_does_what_eager_does(clear_only, grads_before):
    """(Issue 17: `optimizer.step()` / `clear_grad()` inside a converted function are part of
    the program; they once raised.) With no gradients nothing is updated; gradients left by an
    eager backward before the calls are used at every call, as eager code uses them."""
    nets = [Trainer(clear_only) for _ in range(2)]
    nets[1].fc.set_state_dict(nets[0].fc.state_dict())
    for net in nets:
        if grads_before:
            net.fc(rt.ones([1, 2])).sum().backward()
    static = d2s.to_static(nets[1])
    for _ in range(3):
        np.testing.assert_allclose(static(rt.ones([1, 2])).numpy(),
                                   nets[0](rt.ones([1, 2])).numpy(), rtol=1e-6)
    for a, b in zip(nets[0].fc.parameters(), nets[1].fc.parameters(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            assert type(b.grad) is type(a.grad)
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_bool_of_graph_value_in_python_logic_does_not_suggest_decorating():
    @d2s.to_static
    def f(x):
        flags = [bool(v) for v in x]  # a comprehension: Python logic on graph values
        return x if all(flags) else -x
    try:
        f(rt.ones([2]))
    except Exception as e:  # noqa: BLE001  (only the message is checked)
        assert "decorat" not in str(e).lower()
