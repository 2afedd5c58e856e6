"""Dicts the caller reaches (an argument, `self.` state) whose key ORDER the run decides
(issue 35): a key first stored under a tensor `if` and stored again on every path, keys the
branches of a tensor `if` store in another order each. After the call the caller's dict has
its keys in eager's order on every run of one program: each key's rank (`key_ranks`) is a
program output, and the keys are sorted by this run's ranks once the values are written back
and the Python values the trace set are set again (`d2s/writeback_order.py`). Before, the
dict kept the trace's order silently (a first store under the `if`), or the conversion was
refused (another order per branch). Eager vs static vs a NumPy reference over inputs that
take different paths."""
import numpy as np

import d2s
import runtime as rt

POS, NEG = [1.0, 2.0, 0.5], [-5.0, 3.0, 0.5]
INPUTS = (POS, NEG, [2.0, -1.0, 0.25], [-3.0, -1.0, 0.25])


def _leaves(d):
    return [(k, type(v).__name__, v if isinstance(v, (int, float, str)) else
             np.round(v.numpy().astype("float64"), 5).tolist()) for k, v in d.items()]


def log_step(x, logs):
    """A training step logging into the caller's dict: the aux loss only on positive
    batches, then the main loss, then the aux loss on every batch (eager: 'aux' before
    'main' where the `if` ran, after it elsewhere), and a Python step count."""
    if x.mean() > 0:
        logs["aux"] = x.abs().mean()
    logs["main"] = (x * x).mean()
    logs["aux"] = x.sum() * 0.5
    logs["steps"] = logs.get("steps", 0) + 1
    return logs["main"]


def log_step_ref(x, logs):
    if x.mean() > 0:
        logs["aux"] = np.float32(np.abs(x).mean())
    logs["main"] = np.float32((x * x).mean())
    logs["aux"] = np.float32(x.sum() * 0.5)
    logs["steps"] = logs.get("steps", 0) + 1


def test_a_logs_argument_gets_eager_key_order_on_every_run():
    static = d2s.to_static(log_step)
    for xv in INPUTS:
        x = np.array(xv, "float32")
        eager, got, ref = {"epoch": 3}, {"epoch": 3}, {"epoch": 3}
        log_step(rt.to_tensor(x), eager)
        static(rt.to_tensor(x), got)
        log_step_ref(x, ref)
        assert list(got) == list(eager) == list(ref), (xv, list(got), list(eager))
        assert _leaves(got) == _leaves(eager), xv
        np.testing.assert_allclose([float(v) for v in got.values()],
                                   [float(v) for v in ref.values()], rtol=1e-6)
    assert len(static.program_cache) == 1


class Tracker:
    """Per-step statistics on `self`, the keys stored in another order per branch."""

    def __init__(self):
        self.stats = {}

    def update(self, x):
        if x.sum() > 0:
            self.stats["max"] = x.max()
            self.stats["min"] = x.min()
        else:
            self.stats["min"] = x.min() * 2.0
            self.stats["max"] = x.max() * 2.0
        return x - self.stats["min"]


def update_ref(x):
    if x.sum() > 0:
        return {"max": x.max(), "min": x.min()}
    return {"min": np.float32(x.min() * 2.0), "max": np.float32(x.max() * 2.0)}


def test_self_state_stored_in_another_order_per_branch():
    for xv in INPUTS:
        x = np.array(xv, "float32")
        eager, converted = Tracker(), Tracker()
        static = d2s.to_static(converted.update)
        want, got = eager.update(rt.to_tensor(x)), static(rt.to_tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy())
        ref = update_ref(x)
        assert list(converted.stats) == list(eager.stats) == list(ref), xv
        assert _leaves(converted.stats) == _leaves(eager.stats)


def test_one_program_reorders_one_object_across_calls():
    """The same tracker over several batches: the dict keeps the order of its first store,
    as eager's does (later stores of a key keep its place)."""
    eager, converted = Tracker(), Tracker()
    static = d2s.to_static(converted.update)
    for xv in (NEG, POS, NEG):
        x = rt.to_tensor(np.array(xv, "float32"))
        eager.update(x)
        static(x)
        assert list(converted.stats) == list(eager.stats) == ["min", "max"]
        assert _leaves(converted.stats) == _leaves(eager.stats)
    assert len(static.program_cache) == 1
