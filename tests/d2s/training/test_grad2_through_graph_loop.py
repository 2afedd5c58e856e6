"""A gradient penalty whose first gradient goes through a loop whose condition is a tensor,
converted whole: programs cannot differentiate a loop's gradient again, so the call raises a
clear error naming the user's loop line (it was a SplitError naming the internal value 't4')."""
import re

import numpy as np
import pytest

import d2s
import runtime as rt


def penalty(x, w):
    h = x
    i = rt.zeros([], "int64")
    while i < 3:
        h = rt.tanh(h * w)
        i = i + 1
    (dx,) = rt.grad(h.sum(), x, create_graph=True)
    return (dx * dx).sum()


def test_second_derivative_through_a_graph_loop_names_the_loop():
    x = rt.to_tensor(np.array([0.5, -0.3], "float32"), stop_gradient=False)
    w = rt.to_tensor(np.array([1.2, 0.7], "float32"), stop_gradient=False)
    eager = penalty(x, w)
    eager.backward()
    assert w.grad is not None and np.isfinite(w.grad.numpy()).all()  # eager runs
    with pytest.raises(ValueError) as info:
        d2s.to_static(penalty)(x, w).backward()
    message = str(info.value)
    assert "on each trip of a loop whose condition is a tensor" in message
    assert "line 16: while i < 3:" in message and "test_grad2_through_graph_loop.py" in message
    assert not re.search(r"'t\d+'|_retval|Variable\(%", message)
