"""A converted call that returns the caller's own containers (an argument dict or list, a
container nested in one, a list or dict the Layer holds, a dataclass passed in) returns those
objects themselves, as eager code does (`r is metrics`), holding the run's values. Before, the
result was a rebuilt copy, and one of an argument the trace had changed held what the argument
held before the call (`metrics["a"] = x.sum(); return metrics` gave `{}`: silently)."""
import dataclasses

import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

INPUTS = [[1.0, 2.0, 3.0], [-1.0, -2.0, 0.5], [0.5, -4.0, 1.0], [2.0, 2.0, -0.5]]


def record(x, metrics, log):
    metrics["total"] = x.sum()
    if x.mean() > 0:  # (a tensor `if`: the inputs take both paths of one program)
        metrics["inner"]["scale"] = x.max() * 2.0
        log.append(x * 2.0)
    else:
        metrics["inner"]["scale"] = -x.min()
        log.append(-x)
    return metrics, metrics["inner"], log


def test_argument_containers_returned_are_the_callers_own():
    static = d2s.to_static(record)
    for data in INPUTS:
        seen = []
        for fn in (record, static):
            metrics, log = {"inner": {}, "step": 3}, [rt.to_tensor(1.0)]
            r = fn(rt.to_tensor(np.array(data, "float32")), metrics, log)
            assert r[0] is metrics and r[1] is metrics["inner"] and r[2] is log
            seen.append((metrics, log))
        assert_same_leaves(seen[1], seen[0])
        x = np.array(data, "float32")
        want = x.max() * 2 if x.mean() > 0 else -x.min()
        np.testing.assert_allclose(seen[1][0]["inner"]["scale"].numpy(), want)


@dataclasses.dataclass
class State:
    h: rt.Tensor
    steps: int = 0


def step(x, state, extra):
    state.h = state.h * 0.5 + x
    extra["h"] = state.h.sum()
    return state, extra


def test_containers_holding_tensors_returned_are_the_callers_own():
    static = d2s.to_static(step)
    for data in INPUTS:
        seen = []
        for fn in (step, static):
            state = State(rt.to_tensor(np.ones(3, "float32")))
            extra = {"w": rt.to_tensor(np.full(3, 2.0, "float32"))}
            r = fn(rt.to_tensor(np.array(data, "float32")), state, extra)
            assert r[0] is state and r[1] is extra
            seen.append((state.h, extra))
        assert_same_leaves(seen[1], seen[0])
        np.testing.assert_allclose(seen[1][0].numpy(), 0.5 + np.array(data, "float32"))


class Tracker(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 1)
        self.stats = {"calls": 0}
        self.history = []

    def forward(self, x):
        y = self.fc(x).sum()
        self.stats["loss"] = y
        if y > 0:
            self.history.append(y * 2.0)
        else:
            self.history.append(-y)
        return y, self.stats, self.history


def test_containers_of_the_layer_returned_are_its_own_with_gradients():
    eager = Tracker()
    conv = Tracker()
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    for data in INPUTS:
        x = np.array(data, "float32").reshape(1, 3)
        outs = []
        for m, fn in ((eager, eager), (conv, static)):
            m.clear_gradients()
            y, stats, history = fn(rt.to_tensor(x))
            assert stats is m.stats and history is m.history
            stats["loss"].backward()
            outs.append((y, stats, len(history), m.fc.weight.grad))
        assert_same_leaves(outs[1], outs[0])


def flagged(x, metrics):
    out = {}
    if x.sum() > 0:
        out["pos"] = x.sum()
    metrics["mean"] = x.mean()
    return out, metrics


def test_a_dict_of_keys_on_some_paths_beside_state_written_back():
    # (the call writes `metrics` back: its result's dict of keys a tensor `if` sets was
    # returned with every key, 'pos' also on the runs that did not set it)
    static = d2s.to_static(flagged)
    for data in INPUTS:
        got = []
        for fn in (flagged, static):
            metrics = {}
            out, r = fn(rt.to_tensor(np.array(data, "float32")), metrics)
            assert r is metrics
            got.append((out, metrics))
        assert_same_leaves(got[1], got[0])
        assert list(got[1][0]) == (["pos"] if sum(data) > 0 else [])
