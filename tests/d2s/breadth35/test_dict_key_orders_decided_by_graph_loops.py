"""Dict key ORDERS that a graph loop decides (issue 35): a key the body of a loop over
`range()` of a tensor first stores (on every trip, or under a tensor `if` on some trips) is
in the dict only where a trip stored it; stored again after the loop, eager code has it at
its first store's place where the loop ran and at the end elsewhere. Each key a loop adds
gets the moment the loop began as its rank (`key_ranks.after_loop`), so returning the dict,
`list(d)`, a `for` over it and a comprehension follow the run. Running statistics in an
evaluation loop, a counter dict, a metric only positive batches give. Eager vs static vs a
NumPy reference over inputs that take different paths through one program (0, 1 and more
trips); key order, values and Python types compared."""
import numpy as np

import d2s
import runtime as rt

from .test_dict_key_orders_decided_by_the_run import _order, _plain

CASES = (([1.0, 2.0, 3.0], 2), ([-1.0, -2.0, 3.0], 0), ([-1.0, 2.0, 1.0], 1),
         ([1.0, -2.0, 3.0], 3), ([2.0, 1.0, -3.0], 0), ([1.0, 2.0, 3.0], 0))


def _check(fn, ref):
    static = d2s.to_static(fn)
    for xv, n in CASES:
        x = np.array(xv, "float32")
        args = (rt.to_tensor(x), rt.to_tensor(np.array(n, "int64")))
        eager, got = fn(*args), static(*args)
        assert _plain(got) == _plain(eager), (xv, n, _plain(got), _plain(eager))
        want = ref(x, n)
        assert _order(eager) == _order(want), (xv, n, eager, want)
        _close(eager, want)
    assert len(static.program_cache) == 1


def _close(v, want):
    if isinstance(want, dict):
        assert list(v) == list(want)
        for k in want:
            _close(v[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(v) == len(want)
        for a, b in zip(v, want):
            _close(a, b)
    elif isinstance(want, str):
        assert v == want
    else:
        got = v.numpy() if hasattr(v, "numpy") else v
        np.testing.assert_allclose(np.asarray(got, "float64"), np.asarray(want, "float64"),
                                   rtol=1e-5, atol=1e-6)


def running_stats(x, n):
    """Running sums over the first `n` values, then the summary stored over them: 'sum' and
    'count' come first where the loop ran, after 'mean' elsewhere."""
    stats = {}
    for i in range(n):
        stats["sum"] = stats.get("sum", 0.0) + x[i]
        stats["count"] = stats.get("count", 0) + 1
    stats["mean"] = x.mean()
    stats["sum"] = x.sum()
    stats["count"] = 3
    return stats, list(stats)


def running_stats_ref(x, n):
    stats = {}
    if n > 0:
        stats["sum"], stats["count"] = x[:n].sum(), n
    stats["mean"] = x.mean()
    stats["sum"] = x.sum()
    stats["count"] = 3
    return stats, list(stats)


def test_running_stats_stored_again_after_the_loop():
    _check(running_stats, running_stats_ref)


def positive_metric(x, n):
    """A metric only batches with a positive value give (a tensor `if` in the body), the
    metrics read with a `for` and a comprehension after it."""
    metrics = {"loss": x.abs().mean()}
    for i in range(n):
        if x[i] > 0:
            metrics["pos"] = x[i] * 2.0
    metrics["acc"] = (x > 0).astype("float32").mean()
    metrics["pos"] = metrics.get("pos", x[0] * 0.0) + 1.0
    total = x[0] * 0.0
    for name, v in metrics.items():
        total = total * 2.0 + v
    return metrics, [k.upper() for k in metrics], total


def positive_metric_ref(x, n):
    metrics = {"loss": np.abs(x).mean()}
    for i in range(n):
        if x[i] > 0:
            metrics["pos"] = x[i] * 2.0
    metrics["acc"] = np.float32((x > 0).mean())
    metrics["pos"] = metrics.get("pos", np.float32(0.0)) + 1.0
    total = np.float32(0.0)
    for v in metrics.values():
        total = total * 2.0 + v
    return metrics, [k.upper() for k in metrics], total


def test_a_key_set_on_some_trips_then_again_after_the_loop():
    _check(positive_metric, positive_metric_ref)


def flagged_before(x, n):
    """A key a tensor `if` before the loop set on some paths, which the loop sets on every
    trip: present after it where either did."""
    d = {"b": x}
    if x.mean() > 0:
        d["a"] = x
    for i in range(n):
        d["a"] = x * (i + 1.0)
    d["c"] = x + 1.0
    d["a"] = x - 1.0
    return d


def flagged_before_ref(x, n):
    d = {"b": x}
    if x.mean() > 0:
        d["a"] = x
    for i in range(n):
        d["a"] = x * (i + 1.0)
    d["c"] = x + 1.0
    d["a"] = x - 1.0
    return d


def test_a_key_flagged_before_the_loop():
    _check(flagged_before, flagged_before_ref)
