"""What a failed converted call leaves in Python state: when the trace fails with the user's
own exception from their Python logic, the Python changes made before the raise stand, as
they do eagerly, and a later call can succeed; graph values the trace stored are undone, and
so is everything when d2s itself fails (a conversion error). See docs/d2s.md."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .failing_work import KeepsTensor, LazyHead, needs_positive

X = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], "float32")


@pytest.mark.parametrize("mode", ["eager", "static"])
def test_a_lazy_set_up_that_raises_once_then_succeeds(mode):
    rt.seed(0)
    model = LazyHead()
    call = model if mode == "eager" else d2s.to_static(model)
    with pytest.raises(RuntimeError, match="set up: call again"):
        call(rt.to_tensor(X))
    assert model.ready is True and model.calls == 1  # the change before the raise stands
    got = call(rt.to_tensor(X)).numpy()
    w, b = model.fc.weight.numpy(), model.fc.bias.numpy()
    np.testing.assert_allclose(got, (X @ w + b) * 2.0, rtol=1e-6, atol=1e-6)


def test_graph_values_stored_before_the_raise_are_undone():
    model = d2s.to_static(KeepsTensor())
    with pytest.raises(KeyError, match="no result"):
        model(rt.to_tensor(X))
    assert model.note == "after"  # a Python value: stands, as eagerly
    assert model.last is None  # a traced tensor never leaks into the object


def test_a_raise_while_tensor_branches_are_traced_undoes_everything():
    static = d2s.to_static(needs_positive)
    log: list = []
    with pytest.raises(Exception) as caught:
        static(rt.to_tensor(-X - 5.0), log)
    assert log in ([], ["entered"])  # whichever d2s decided, never a half-made trace's state
    assert not any(isinstance(v, d2s.StaticFunction) for v in log)
    log.clear()
    np.testing.assert_allclose(static(rt.to_tensor(X + 5.0), log).numpy(), (X + 5.0) * 2.0)
    assert caught.value is not None
