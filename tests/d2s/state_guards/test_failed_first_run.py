"""A call whose program is traced and then fails when it first runs (a run-time error, such
as a name bound on one path only) leaves no static Variable in the user's objects: they hold
what eager code leaves (the changes made before the error), and the next call works.
(Before, the trace's Variables stayed in the lists and dicts it had changed.)"""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program.variable import Variable


class Recorder(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.last = None
        self.seen = []
        self.by_name = {}
        self.calls = 0

    def forward(self, x):
        self.last = x * 2.0
        self.seen.append(x)
        self.by_name["x"] = x
        self.calls += 1
        if x.sum() > 0:
            y = x
        return y  # unbound when the sum is not positive: eager raises UnboundLocalError


def _variables(layer):
    values = [layer.last, *layer.seen, *layer.by_name.values(), layer.calls]
    return [v for v in values if isinstance(v, Variable)]


def _state(layer):
    return ([t.numpy().tolist() for t in (layer.last, *layer.seen)], layer.calls,
            {k: v.numpy().tolist() for k, v in layer.by_name.items()})


def test_a_failing_first_run_leaves_no_variable_behind():
    eager, static = Recorder(), d2s.to_static(Recorder())
    pos = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    neg = rt.to_tensor(np.array([-1.0, -2.0], "float32"))
    for model in (eager, static):
        np.testing.assert_allclose(model(pos).numpy(), [1.0, 2.0])
        assert model.calls == 1 and len(model.seen) == 1
        with pytest.raises(UnboundLocalError):
            model(neg)  # (static: the list changed, so this call traces again; its run fails)
    assert _variables(static) == []
    # as eager code leaves them: what the call changed before the error stands
    assert _state(static) == _state(eager) and static.calls == 2 and len(static.seen) == 2
    np.testing.assert_allclose(static.last.numpy(), [-2.0, -4.0])
    np.testing.assert_allclose(static(pos).numpy(), [1.0, 2.0])
    np.testing.assert_allclose(eager(pos).numpy(), [1.0, 2.0])
    assert _variables(static) == [] and _state(static) == _state(eager) and static.calls == 3
