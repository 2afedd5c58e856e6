"""State a Layer's (or any user object's) *methods* reach: a list a method closes over (a
Layer class defined inside a function, as test code and notebooks do) or a module-level
registry it appends to, changed by a call under a tensor `if`. The mutation log walks the
methods of the user classes of the objects it sees, so the list is found: it becomes a tensor
array and after the call holds the Tensors eager code holds (it held the trace's Variables)."""
import numpy as np

import d2s
import runtime as rt

from .helpers import t, variables_reachable

SEEN = []


def build(trace):
    class Tap(rt.nn.Layer):
        def forward(self, h):
            trace.append(h * 1.0)
            SEEN.append(h.sum())
            return h * 2.0

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.tap = Tap()

        def forward(self, x):
            if x.sum() > 2:
                y = self.tap(x)
            else:
                y = x - 1.0
            return y
    return Net()


def test_lists_reached_through_a_sublayers_method_get_eagers_items():
    eager_trace, static_trace = [], []
    eager, static = build(eager_trace), d2s.to_static(build(static_trace))
    SEEN.clear()
    rows = ([1.0, 2.0], [4.0, 1.0], [0.5, 0.5], [3.0, 3.0])
    for row in rows:
        want = np.array(row) * 2.0 if sum(row) > 2 else np.array(row) - 1.0
        np.testing.assert_allclose(eager(t(row)).numpy(), want)
        np.testing.assert_allclose(static(t(row)).numpy(), want)
    # (the lists keep growing across calls, so their lengths differ at each call: a retrace)
    big = [np.array(r) for r in rows if sum(r) > 2]
    for got in (eager_trace, static_trace):
        assert [type(v) for v in got] == [rt.Tensor] * len(big)
        for v, w in zip(got, big, strict=True):
            np.testing.assert_allclose(v.numpy(), w)
    np.testing.assert_allclose([v.numpy() for v in SEEN], [w.sum() for w in big for _ in "es"])
    assert variables_reachable(static, static_trace, SEEN) == []
