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


def tolist_in_graph(x):
    return rt.to_tensor(x.tolist())


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
    for fn in (item_drives_python, numpy_in_graph):
        f = d2s.to_static(fn)
        for v in (1.0, -1.0):
            x = rt.full([2], v)
            np.testing.assert_allclose(f(x).numpy(), np.asarray(fn(x)))
        assert len(f.program_cache) == 1


@pytest.mark.parametrize("fn,cls,construct,fix", [
    (tolist_in_graph, TypeError, "tolist()", "keep it a tensor"),
    (backward_inside, RuntimeError, "backward()", "Move `backward()` out of the converted"),
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


@pytest.mark.parametrize("clear_only,construct", [(False, "optimizer.step()"),
                                                  (True, "optimizer.clear_grad()")])
def test_optimizer_step_inside_is_an_error_naming_line_and_fix(clear_only, construct):
    net = d2s.to_static(Trainer(clear_only))
    before = net.fc.weight.numpy().copy()
    with pytest.raises(RuntimeError) as info:
        net(rt.ones([1, 2]))
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert construct in text and "out of the converted function" in text
    assert "test_not_a_graph.py" in text and "self.opt." in text  # the user's line
    assert "decorat" not in text.lower()
    np.testing.assert_array_equal(net.fc.weight.numpy(), before)  # nothing was updated


def test_bool_of_graph_value_in_python_logic_does_not_suggest_decorating():
    @d2s.to_static
    def f(x):
        flags = [bool(v) for v in x]  # a comprehension: Python logic on graph values
        return x if all(flags) else -x
    try:
        f(rt.ones([2]))
    except Exception as e:  # noqa: BLE001  (only the message is checked)
        assert "decorat" not in str(e).lower()
