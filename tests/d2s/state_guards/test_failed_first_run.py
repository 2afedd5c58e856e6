"""A call whose program is traced and then fails when it first runs (a run-time error, such
as a name bound on one path only) leaves no static Variable in the user's objects: Python
values are as they were before the call, and the next call works. (Before, the trace's
Variables stayed in the lists and dicts it had changed.)"""
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


def test_a_failing_first_run_leaves_no_variable_behind():
    static = d2s.to_static(Recorder())
    pos = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    neg = rt.to_tensor(np.array([-1.0, -2.0], "float32"))
    np.testing.assert_allclose(static(pos).numpy(), [1.0, 2.0])
    assert static.calls == 1 and len(static.seen) == 1
    with pytest.raises(UnboundLocalError):
        static(neg)  # the list changed, so this call traces again, then its run fails
    assert _variables(static) == []
    assert len(static.seen) == 1 and static.calls == 1  # Python values: as before the call
    # a tensor kept on the object is written by the program, as far as it ran (as eager
    # code, which set it before the error)
    np.testing.assert_allclose(static.last.numpy(), [-2.0, -4.0])
    np.testing.assert_allclose(static(pos).numpy(), [1.0, 2.0])
    assert _variables(static) == [] and len(static.seen) == 2 and static.calls == 2
