"""Dict keys first set inside a graph loop (issue 35): in eager code the key exists after the
loop only when the loop ran (or the branch of a tensor `if` in its body that sets it ran),
which the program decides when it runs. A dict only a local name holds gets a presence flag
the loop carries: reads, `in`, `.get`, `len()`, a `for` over it and returning it follow eager
code, and a read where no trip set the key raises eager's `KeyError` when the program runs.
A dict the caller can reach (an argument, an attribute) has the key after each call
that set it, as eager code leaves it. Keys set before the loop convert as before: eager vs static vs NumPy over 0, 1
and 3 trips, one program, the gradient against finite differences."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def last_scaled(x, n):
    stats = {}
    for i in range(n):
        stats["last"] = x * i
    return stats["last"] * 2.0


def test_a_key_read_after_a_loop_that_did_not_run_is_eagers_key_error():
    static = d2s.to_static(last_scaled, full_graph=True)
    xv = np.array([1.5, -2.0], "float32")
    for k in (1, 3):
        for fn in (last_scaled, static):
            np.testing.assert_allclose(fn(rt.to_tensor(xv), rt.to_tensor(k)).numpy(),
                                       xv * (k - 1) * 2.0)
    with pytest.raises(KeyError) as eager:
        last_scaled(rt.to_tensor(xv), rt.to_tensor(0))
    with pytest.raises(KeyError) as info:
        static(rt.to_tensor(xv), rt.to_tensor(0))
    assert info.value.args == eager.value.args == ("last",)
    assert_at_user_line(info.value, __file__, line_of(last_scaled, "return stats["))
    assert len(static.program_cache) == 1


class Tracker(rt.nn.Layer):
    """Per-call stats in a local dict: a running sum and count grown with `.get`, and the
    step whose score passed a threshold (set under a tensor `if` in the loop)."""

    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([2], default_initializer=rt.nn.initializer.Constant(0.5))

    def forward(self, x, n):
        stats = {"base": x * self.w}
        for i in range(n):
            h = x * self.w * (i + 1)
            stats["sum"] = stats.get("sum", rt.zeros([2])) + h
            stats["count"] = stats.get("count", 0) + 1
            if h.sum() > 2.0:
                stats["hit"] = h
        out = stats["base"] * 0.0
        for key, v in stats.items():        # the turn of a key runs where it is present
            if key != "count":
                out = out + v
        return out, stats.get("count", 0), "hit" in stats, len(stats), stats


def tracker_reference(xv, w, k):
    """NumPy: out, count, hit present, len, the keys."""
    hs = [xv * w * (i + 1) for i in range(k)]
    keys = ["base"] + (["sum", "count"] if k else [])
    out = xv * w + sum(hs, np.zeros(2))
    hits = [h for h in hs if h.sum() > 2.0]
    if hits:
        keys.append("hit")
        out = out + hits[-1]
    return out, k, bool(hits), len(keys), keys


def test_keys_first_set_in_the_loop_and_under_a_tensor_if_in_it():
    eager, static = Tracker(), d2s.to_static(Tracker())
    static.w.set_value(eager.w.numpy())
    for xv, k in ((np.array([1.0, 2.0], "float32"), 0), (np.array([1.0, 2.0], "float32"), 1),
                  (np.array([0.5, 0.25], "float32"), 3), (np.array([1.0, 2.0], "float32"), 3)):
        want = tracker_reference(xv.astype("float64"), 0.5, k)
        for m in (eager, static):
            out, count, hit, n, stats = m(rt.to_tensor(xv), rt.to_tensor(k))
            np.testing.assert_allclose(out.numpy(), want[0], rtol=1e-6)
            assert (count, type(count), bool(hit), n, list(stats)) == (
                want[1], int, want[2], want[3], want[4])
            assert all(rt.is_tensor(v) for key, v in stats.items() if key != "count")
    assert len(static.forward.program_cache) == 1


def test_the_gradient_flows_through_a_key_first_set_in_the_loop():
    xv = np.array([0.75, -1.5], "float32")
    for k in (0, 1, 3):
        grads = []
        for m in (Tracker(), d2s.to_static(Tracker())):
            out = m(rt.to_tensor(xv), rt.to_tensor(k))[0]
            out.sum().backward()
            grads.append(m.w.grad.numpy())

        def f(w, k=k):
            return float(tracker_reference(xv.astype("float64"), w, k)[0].sum())
        want = numeric_grad(f, np.full(2, 0.5))
        for g in grads:
            np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def into_argument(x, n, stats):
    for i in range(n):
        stats["last"] = x * i
    return x


class Remember(rt.nn.Layer):
    """Streaming state in a dict attribute: read when a previous call left the key, set in
    a graph loop."""

    def __init__(self):
        super().__init__()
        self.stats = {}

    def forward(self, x, n):
        y = x * 1.0
        if "last" in self.stats:
            y = y + self.stats["last"]
        for i in range(n):
            self.stats["last"] = x * i + y
        return y


def seen(d):
    return {k: (type(v).__name__, v.numpy().tolist()) for k, v in d.items()}


def test_a_dict_the_caller_reaches_has_the_key_after_the_calls_that_set_it():
    """The dict is written back after each call with the key where a trip set it, and left
    as it was elsewhere; a call that finds the key set runs the program traced with it."""
    static = d2s.to_static(into_argument)
    de, ds = {}, {}
    for k in (0, 2, 0, 3):
        for fn, d in ((into_argument, de), (static, ds)):
            fn(rt.to_tensor([1.0, 2.0]), rt.to_tensor(k), d)
        assert seen(ds) == seen(de)
    eager, model = Remember(), Remember()
    static = d2s.to_static(model)
    for k in (0, 2, 0, 3, 1):
        want = eager(rt.to_tensor([1.0, 2.0]), rt.to_tensor(k))
        got = static(rt.to_tensor([1.0, 2.0]), rt.to_tensor(k))
        np.testing.assert_allclose(got.numpy(), want.numpy())
        assert seen(model.stats) == seen(eager.stats)
    assert len(static.forward.program_cache) == 2  # (the key unset, then set, on entry)


def running_stats(x, n):
    stats = {"total": rt.zeros([2]), "count": 0, "last": x * 0.0}
    for i in range(n):
        stats["total"] = stats["total"] + x * x * i
        stats["count"] += 1
        stats["last"] = x * i
    return stats["total"] + stats["last"], stats["count"]


def test_keys_set_before_the_loop_convert():
    static = d2s.to_static(running_stats, full_graph=True)
    xv = np.array([1.5, -2.0], "float32")
    for k in (0, 1, 3):
        want = (xv * xv * sum(range(k)) + xv * max(k - 1, 0), k)
        for fn in (running_stats, static):
            y, count = fn(rt.to_tensor(xv), rt.to_tensor(k))
            np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-6)
            assert int(count) == k

        def f(v, k=k):
            return float((v * v * sum(range(k)) + v * max(k - 1, 0)).sum())
        x = rt.to_tensor(xv, stop_gradient=False)
        static(x, rt.to_tensor(k))[0].sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, xv.astype("float64")),
                                   rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 2  # one per stop_gradient of x, for every trip count


def popped(x, n):
    d = {}
    for i in range(n):
        d["k"] = x * i
    v = d.pop("k", x * 0.0 - 1.0)        # the default where no trip set it
    return v, "k" in d, len(d)


def stopped(x, n):
    d = {}
    i = 0
    while i < n:
        d["k"] = x + i
        if (x + i).sum() > 6:            # a tensor break
            break
        i += 1
    return "k" in d, d.get("k", x * 0.0)


@pytest.mark.parametrize("fn", [popped, stopped])
def test_pop_with_a_default_and_a_loop_with_a_tensor_break(fn):
    static = d2s.to_static(fn)
    xv = np.array([1.0, 2.0], "float32")
    for k in (0, 2, 5):
        want = fn(rt.to_tensor(xv), rt.to_tensor(k))
        got = static(rt.to_tensor(xv), rt.to_tensor(k))
        for a, b in zip(got, want, strict=True):
            assert type(a) is type(b)
            np.testing.assert_allclose(np.asarray(a.numpy() if rt.is_tensor(a) else a),
                                       np.asarray(b.numpy() if rt.is_tensor(b) else b))
    assert len(static.program_cache) == 1
