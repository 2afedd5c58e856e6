"""Comprehensions over dicts whose keys, or their order, the run decides (issue 35): a logs
dict with a key set under a tensor `if` turned into Python floats (`{k: v.item() for k, v in
logs.items()}`), the names of the losses present (`[k for k in losses]`), a total over them
(`sum(v for v in losses.values())`), a dict whose key order the run decides scaled by a
comprehension. Each converts as the `for` statement over the dict does: each key's item
under its presence flag, in the order of the run (`d2s/operators/comp_arrays.py`). Eager vs
static vs a NumPy reference over inputs that take different paths through one program; key
order, values and Python types compared."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError

from .messages import assert_at_user_line
from .test_dict_key_orders_decided_by_the_run import _order, _plain
from .test_dict_keys_in_graph_loops import line_of

INPUTS = ([1.0, 2.0, 0.5], [-5.0, 3.0, 0.5], [1.0, -3.0, 0.5], [-3.0, -1.0, 0.25])


def _check(fn, ref, inputs=INPUTS, args=()):
    static = d2s.to_static(fn)
    for xv in inputs:
        x = np.array(xv, "float32")
        eager, got = fn(rt.to_tensor(x), *args), static(rt.to_tensor(x), *args)
        assert _plain(got) == _plain(eager), (xv, _plain(got), _plain(eager))
        want = ref(x, *args)
        assert _order(eager) == _order(want), (xv, eager, want)
        assert _plain(_np(eager)) == _plain(_np(want)), (xv, eager, want)
    assert len(static.program_cache) == 1


def _np(v):
    """Values as NumPy arrays (float32 rounded) and Python numbers, to compare with the
    reference."""
    if isinstance(v, dict):
        return {k: _np(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_np(x) for x in v)
    if isinstance(v, (bool, int, float, str)):
        return v
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v, "float32")


class Head:
    def __init__(self, use_aux):
        self.use_aux = use_aux


def _losses(x, head):
    losses = {"main": (x * x).mean()}
    if head.use_aux and x[0] > 0:  # (Python-decided, then tensor-decided)
        losses["aux"] = x.abs().mean() * 0.5
    if x[1] > 0:
        losses["reg"] = x.sum() * 0.1
    return losses


def training_logs(x):
    """A training step's logs: losses present on some paths only, logged as Python floats
    under a prefix, with the names present and their total."""
    losses = _losses(x, Head(True))
    logs = {f"train/{name}": v.item() for name, v in losses.items()}
    names = [name for name in losses]
    total = sum(v for v in losses.values())
    return logs, names, total


def training_logs_ref(x):
    losses = {"main": np.float32((x * x).mean())}
    if x[0] > 0:
        losses["aux"] = np.float32(np.abs(x).mean() * 0.5)
    if x[1] > 0:
        losses["reg"] = np.float32(x.sum() * 0.1)
    logs = {f"train/{k}": float(v) for k, v in losses.items()}
    return logs, list(losses), np.float32(sum(losses.values()))


def test_logs_names_and_totals_of_losses_on_some_paths():
    _check(training_logs, training_logs_ref)


def scaled_in_run_order(x):
    """A key first stored under a tensor `if` and stored again on every path: eager code
    has it first where the `if` ran, last elsewhere; scaled by a comprehension, and its keys
    listed, in that order."""
    stats = {}
    if x.mean() > 0:
        stats["mean"] = x.mean()
    stats["max"] = x.max()
    stats["mean"] = x.mean() * 2
    scaled = {k: v * 0.5 for k, v in stats.items()}
    return scaled, [k.upper() for k in stats], [float(v) for v in stats.values()]


def scaled_in_run_order_ref(x):
    stats = {}
    if x.mean() > 0:
        stats["mean"] = x.mean()
    stats["max"] = x.max()
    stats["mean"] = np.float32(x.mean() * 2)
    scaled = {k: np.float32(v * 0.5) for k, v in stats.items()}
    return scaled, [k.upper() for k in stats], [float(v) for v in stats.values()]


def test_comprehensions_follow_the_order_the_run_decides():
    _check(scaled_in_run_order, scaled_in_run_order_ref)


def metric_table(x, thresholds):
    """Per-threshold recall keyed by ints, a key set only where the batch has positives;
    the table as a list of (threshold, value) pairs and as a dict of Python floats."""
    recall = {0: (x > thresholds[0]).astype("float32").mean()}
    if (x > 0).any():
        recall[1] = (x > thresholds[1]).astype("float32").mean()
    return [(t, v * 100.0) for t, v in recall.items()], {t: float(v) for t, v in recall.items()}


def metric_table_ref(x, thresholds):
    recall = {0: np.float32((x > thresholds[0]).mean())}
    if (x > 0).any():
        recall[1] = np.float32((x > thresholds[1]).mean())
    return ([(t, np.float32(v * 100.0)) for t, v in recall.items()],
            {t: float(v) for t, v in recall.items()})


def test_int_keys_on_some_paths_with_a_numpy_argument():
    th = np.array([0.0, 1.5], "float32")
    _check(metric_table, metric_table_ref, INPUTS + ([-1.0, -2.0, -3.0],), (th,))


def filtered(x):
    d = {"a": x}
    if x.mean() > 0:
        d["b"] = x * 2
    return {k: v for k, v in d.items() if k != "a"}


def test_a_filtered_dict_comprehension_stays_refused_at_the_line():
    with pytest.raises(ConversionError) as e:
        d2s.to_static(filtered)(rt.to_tensor(np.array([1.0, 2.0], "float32")))
    text = assert_at_user_line(e.value, __file__, line_of(filtered, "return {k"))
    assert "Write a `for` statement" in text
