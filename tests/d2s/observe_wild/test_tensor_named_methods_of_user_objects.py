"""A user object's method named like a Tensor method (`meter.add(v)`, `meter.mean()`,
`cfg.scale()`, `log.log(...)`, `hist.sum()`, `rec.item()`) called on a parameter or a local
name: converted code left `obj.m(...)` alone where `m` is a Tensor method name, so the method
ran once while tracing, as plain Python: its effects were not replayed by later calls and
what it read was not guarded (a meter counting one step of three, a config's changed scale
ignored, or `float()` of a computed loss refused inside the meter). Such a call is now a user
call like any other (`receivers`: only a local that always holds a library value keeps
`x.sum()` as written). Eager vs static (vs NumPy), the objects' state after every call, over
inputs that take both sides of one program's tensor `if`."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import assert_same_leaves, user_state


class Meter:
    def __init__(self):
        self.total, self.n, self.vals = 0.0, 0, []

    def add(self, v):
        self.vals.append(float(v))
        self.total += float(v)
        self.n += 1

    def update(self, v, k=1):
        self.total += v * k
        self.n += k

    def mean(self):
        return self.total / max(self.n, 1)

    def sum(self):
        return sum(self.vals)

    def max(self):
        return max(self.vals) if self.vals else 0.0

    def item(self):
        return self.n


class Config:
    def __init__(self, s):
        self.s = s

    def scale(self):
        return self.s * 2.0


class Log:
    def __init__(self):
        self.entries = []

    def log(self, name, value):
        self.entries.append((name, round(float(value), 4)))


def step(x, meter):
    loss = (x * x).mean()
    meter.add(loss)
    return x * meter.mean(), meter.item()


def step_ref(x, state):
    loss = float(np.float32((x * x).mean()))
    state["vals"].append(loss)
    mean = sum(state["vals"]) / len(state["vals"])
    return (x * np.float32(mean)).astype("float32"), len(state["vals"])


def branchy(x, meter):
    m = meter  # (a local alias of the parameter)
    if x.mean() > 0:
        m.update(1.0)
        y = x + 1.0
    else:
        m.update(2.0, k=2)
        y = x - 1.0
    return y * m.mean(), m.item()


def scaled(x, cfg):
    return x * cfg.scale()


def logged(x, log):
    total = x.sum()
    log.log("loss", total)
    return total


def summed(x, hist):
    for i in range(x.shape[0]):
        hist.add(x[i].sum())
    return hist.max(), hist.sum()


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)
        self.meter = Meter()

    def forward(self, x):
        h = self.fc(x)
        meter = self.meter  # (a local bound to an attribute)
        meter.add(h.abs().mean())
        return h.mean() * meter.item()


XS = [np.array([1.0, 2.0], "float32"), np.array([-3.0, 1.0], "float32"),
      np.array([2.0, 2.0], "float32")]


def _both(fn, make, xs=XS, between=None):
    """Each call of eager `fn` and converted `fn`, each on its own fresh object: results and
    the object's state after every call compared. The eager results, states, and the
    converted function."""
    objs, static = {}, d2s.to_static(fn)
    for mode in ("eager", "static"):
        obj, call = make(), fn if mode == "eager" else static
        seen = []
        for i, x in enumerate(xs):
            seen.append((call(rt.to_tensor(x), obj), copy.deepcopy(user_state(obj))))
            if between is not None:
                between(obj, i)
        objs[mode] = seen
    for (got, got_state), (want, want_state) in zip(objs["static"], objs["eager"],
                                                    strict=True):
        assert_same_leaves(got, want)
        assert got_state == want_state
    return [w for w, _ in objs["eager"]], [s for _, s in objs["eager"]], static


def test_a_meter_parameter_counts_every_call_and_its_mean_is_the_runs():
    results, states, _ = _both(step, Meter)
    state = {"vals": []}
    for x, got, st in zip(XS, results, states, strict=True):
        want, n = step_ref(x, state)
        np.testing.assert_allclose(got[0].numpy(), want, rtol=1e-6)
        assert got[1] == n and st["n"] == n and st["vals"] == pytest.approx(state["vals"])


def test_a_meter_alias_updated_on_both_sides_of_a_tensor_if():
    _, states, _ = _both(branchy, Meter)
    assert [s["n"] for s in states] == [1, 3, 4]  # (1, then 2 on the negative mean, then 1)


def test_a_config_method_reads_the_callers_changed_state():
    def bump(cfg, i):
        cfg.s += 1.0
    results, _, _ = _both(scaled, lambda: Config(1.0), between=bump)
    for i, (x, got) in enumerate(zip(XS, results)):
        np.testing.assert_allclose(got.numpy(), x * (1.0 + i) * 2.0)


def test_a_logger_logs_every_call():
    _, states, static = _both(logged, Log)
    assert states[-1]["entries"] == [("loss", float(x.sum())) for x in XS]
    assert len(static.program_cache) == 1  # (the program logs: not a trace per call)


def test_a_histogram_filled_in_a_loop_over_a_range():
    results, states, _ = _both(summed, Meter)
    flat = np.concatenate(XS).astype("float64")
    assert states[-1]["vals"] == flat.tolist()
    assert results[-1] == (flat.max(), flat.sum())


def test_a_meter_reached_through_a_local_bound_to_a_layer_attribute():
    rt.seed(0)
    eager = Head()
    static_layer = copy.deepcopy(eager)
    static = d2s.to_static(static_layer)
    for x in XS:
        xt = rt.to_tensor(x[None])
        assert_same_leaves(static(xt), eager(xt))
    assert static_layer.meter.n == eager.meter.n == 3
    assert static_layer.meter.vals == pytest.approx(eager.meter.vals)


def test_one_function_given_a_tensor_then_a_user_object():
    """`stat.mean()`: a Tensor's method on the first call, the user's on the second (the
    conversion that assumed a tensor is not used for the user object)."""
    def weighted(x, stat):
        return x * stat.mean()

    static = d2s.to_static(weighted)
    x = rt.to_tensor(XS[0])
    assert_same_leaves(static(x, rt.to_tensor(XS[1])), weighted(x, rt.to_tensor(XS[1])))
    meter, twin = Meter(), Meter()
    for v in (2.0, 4.0):
        meter.update(v)
        twin.update(v)
        assert_same_leaves(static(x, meter), weighted(x, twin))
    assert "_d2s.call(stat.mean)()" in static.code  # (what ran for the user object)


def test_tensor_methods_of_library_values_stay_as_written():
    def f(x, w):
        h = rt.matmul(x, w)
        s = h.sum(axis=-1)
        for i in range(2):
            s = s + h[i].mean() * i
        return s.max()

    static = d2s.to_static(f)
    x, w = rt.to_tensor(np.ones([2, 2], "float32")), rt.to_tensor(np.eye(2, dtype="float32"))
    assert_same_leaves(static(x, w), f(x, w))
    for written in ("h.sum(axis=-1)", "s.max()"):
        assert written in static.code, written


class Guarded:
    def __init__(self):
        self.n = 0

    def add(self, v):
        if v.sum() > 5:
            raise ValueError("too big")
        self.n += 1
        return v


class Holder:
    def __init__(self):
        self.meter = Guarded()


def caught(x, holder):
    try:
        y = holder.meter.add(x)  # (a Tensor method name on an attribute: the user's method)
    except ValueError:
        y = x * 0.0
    return y


@pytest.mark.parametrize("x", [np.array([1.0, 2.0], "float32"), np.array([4.0, 5.0], "float32")])
def test_a_user_method_raising_in_a_try_body_reaches_its_except(x):
    static = d2s.to_static(caught)
    eager_holder, static_holder = Holder(), Holder()
    assert_same_leaves(static(rt.to_tensor(x), static_holder), caught(rt.to_tensor(x),
                                                                      eager_holder))
    assert static_holder.meter.n == eager_holder.meter.n


def _keep(parts, meter):
    parts.append(meter)


def through_an_alias(x, meter):
    parts = [x]
    q = parts
    q.append(meter)
    m = parts[1]
    m.add(x.sum())
    return x + 1.0


def through_a_helper(x, meter):
    parts = [x]
    _keep(parts, meter)
    m = parts[-1]
    m.add(x.sum())
    return x + 1.0


def through_a_nested_list(x, meter):
    box = ([x],)
    box[0].append(meter)
    m = box[0][1]
    m.add(x.sum())
    return x + 1.0


def through_an_item_set(x, meter):
    parts = [x, x]
    parts[1] = meter
    m = parts[1]
    m.add(x.sum())
    return x + 1.0


@pytest.mark.parametrize("fn", [through_an_alias, through_a_helper, through_a_nested_list,
                                through_an_item_set])
def test_a_user_object_put_in_a_list_of_tensors_is_still_the_users(fn):
    _, states, _ = _both(fn, Meter)
    assert [s["n"] for s in states] == [1, 2, 3]
