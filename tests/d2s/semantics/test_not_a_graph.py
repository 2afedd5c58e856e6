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


def test_bool_of_graph_value_in_python_logic_does_not_suggest_decorating():
    @d2s.to_static
    def f(x):
        flags = [bool(v) for v in x]  # a comprehension: Python logic on graph values
        return x if all(flags) else -x
    try:
        f(rt.ones([2]))
    except Exception as e:  # noqa: BLE001  (only the message is checked)
        assert "decorat" not in str(e).lower()
