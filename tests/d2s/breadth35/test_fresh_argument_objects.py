"""A fresh container per step written by the converted step (issues 33/35, "a trace on every
call"): `metrics = {}`, a `SimpleNamespace`, a dataclass, a list appended to, a dict inside a
tuple or passed through `**kwargs`, made anew for each call. Each call's own objects get the
call's values, as eagerly (never an earlier call's object), and one program serves every call
whose objects have the same structure and values (`d2s/rebinding.py`); before, the first
call's program wrote into the first call's objects, so such arguments were keyed by identity
and every call traced again."""
import dataclasses
import types

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

# inputs taking both paths of the tensor `if`s below
INPUTS = [[1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, 0.5]]


def _plain(obj):
    """A user object as nested plain values (for comparing namespaces and dataclasses)."""
    if isinstance(obj, types.SimpleNamespace) or dataclasses.is_dataclass(obj):
        return {"type": type(obj).__name__, **{k: _plain(v) for k, v in vars(obj).items()}}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_plain(v) for v in obj)
    return obj


def _run(fn, make, call=lambda f, x, obj: f(x, obj), reference=None):
    """Calls eager and converted with a fresh object per step; compares results and every
    step's object so far (and a NumPy reference of the result where given)."""
    static = d2s.to_static(fn)
    got_all, want_all = [], []
    for v in INPUTS:
        x = rt.to_tensor(np.array(v, "float32"))
        got, want = make(), make()
        got_out, want_out = call(static, x, got), call(fn, x, want)
        got_all.append(got)
        want_all.append(want)
        assert_same_leaves(got_out, want_out, "result")
        if reference is not None:
            np.testing.assert_allclose(got_out.numpy(), reference(np.array(v, "float32")),
                                       rtol=1e-6)
        assert_same_leaves(_plain(got_all), _plain(want_all), "the objects of every call")
    return static


def step_metrics(x, metrics):
    metrics["n"] = metrics.get("n", 0) + 1
    metrics["loss"] = float(x.mean())
    if x.sum() > 0:  # a tensor `if`: inputs take both paths through one program
        return x * 2.0
    return x - 1.0


def _ref_metrics(x):
    return x * 2.0 if x.sum() > 0 else x - 1.0


def test_a_fresh_metrics_dict_per_step_uses_one_program():
    static = _run(step_metrics, dict, reference=_ref_metrics)
    assert static.program_cache.traces == 1


def step_namespace(x, state):
    state.steps += 1
    state.last = float((x * x).mean())
    state.hist.append(bool(x.max() > 1.0))
    y = x * 3.0 if x.mean() > 0 else -x
    state.warm = True
    return y


def test_a_fresh_simple_namespace_per_step_uses_one_program():
    static = _run(step_namespace, lambda: types.SimpleNamespace(steps=0, hist=[],
                                                                warm=False))
    assert static.program_cache.traces == 1


@dataclasses.dataclass
class StepState:
    steps: int = 0
    losses: list = dataclasses.field(default_factory=list)
    best: float = 1e9


def step_dataclass(x, st):
    st.steps += 1
    loss = x.sum().item()
    st.losses.append(loss)
    st.best = min(st.best, loss)
    return x * 2.0 if x.sum() > 0 else x * 0.5


def test_a_fresh_dataclass_per_step_uses_one_program():
    static = _run(step_dataclass, StepState)
    assert static.program_cache.traces == 1


def step_log(x, log):
    log.append(x.sum().item())
    log.append("seen")
    return x + 1.0


def test_a_fresh_list_appended_to_uses_one_program():
    static = _run(step_log, list, reference=lambda x: x + 1.0)
    assert static.program_cache.traces == 1


def step_pair(x, pair):
    metrics, log = pair
    metrics["loss"] = (x * x).mean().item()
    log.append(x.max().item())
    return x - 1.0 if x.mean() > 0 else x + 1.0


def step_keywords(x, **extra):
    extra["metrics"]["loss"] = x.sum().item()
    extra["metrics"]["calls"] = extra["metrics"].get("calls", 0) + 1
    return x + 1.0


def step_nested(x, state):
    meters = state["meters"]
    meters.count += 1
    meters.total += x.sum().item()
    state["hist"].append(x.mean().item())
    state.setdefault("first", float(x[0]))
    return x * meters.count


@pytest.mark.parametrize("fn, make, call", [
    (step_pair, lambda: ({}, []), None),
    (step_keywords, dict, lambda f, x, obj: f(x, metrics=obj)),
    (step_nested, lambda: {"hist": [], "meters": types.SimpleNamespace(count=0, total=0.0)},
     None),
], ids=["dict-in-tuple", "kwargs", "nested"])
def test_fresh_holders_of_written_objects_use_one_program(fn, make, call):
    static = _run(fn, make, *([call] if call else []))
    assert static.program_cache.traces == 1


def test_one_dict_kept_across_calls_still_counts():
    """The same dict passed on every call: its counter, read by the step, grows (a program
    per count, as before: the dict is keyed by what the trace read of it)."""
    static = d2s.to_static(step_metrics)
    got, want = {}, {}
    for v in INPUTS:
        x = rt.to_tensor(np.array(v, "float32"))
        assert_same_leaves(static(x, got), step_metrics(x, want), "result")
        assert got == want


def test_each_structure_gets_its_own_program():
    """A fresh dict that starts with a count (`{"n": 5}`) is another structure: a second
    program, shared by every later call passing one like it."""
    static = d2s.to_static(step_metrics)
    for i, v in enumerate(INPUTS * 2):
        x = rt.to_tensor(np.array(v, "float32"))
        got, want = ({}, {}) if i % 2 else ({"n": 5}, {"n": 5})
        assert_same_leaves(static(x, got), step_metrics(x, want), "result")
        assert got == want
    assert static.program_cache.traces == 2


def step_two(x, a, b):
    a["n"] = a.get("n", 0) + 1
    b["n"] = b.get("n", 0) + 10
    a["sum"] = x.sum().item()
    return x * float(a["n"])


def test_one_dict_passed_twice_then_two_dicts():
    """Aliasing decided per call: the same dict as both arguments (eager: 11 in it, and the
    result scaled by 11), then two fresh dicts (1 and 10), then the same one again."""
    static = d2s.to_static(step_two)
    for i, v in enumerate(INPUTS + INPUTS[:2]):
        x = rt.to_tensor(np.array(v, "float32"))
        if i % 2 == 0:
            g = {}
            w = {}
            got, want = static(x, g, g), step_two(x, w, w)
            assert_same_leaves((got, g), (want, w), "result and dict")
        else:
            g1, g2, w1, w2 = {}, {}, {}, {}
            got, want = static(x, g1, g2), step_two(x, w1, w2)
            assert_same_leaves((got, g1, g2), (want, w1, w2), "result and dicts")
    assert static.program_cache.traces == 2


SHARED = {}


def step_shared(x, metrics):
    metrics["n"] = metrics.get("n", 0) + 1
    SHARED["seen"] = SHARED.get("seen", 0) + 1
    return x + float(metrics["n"])


def test_an_argument_that_is_also_a_global_writes_where_eager_does():
    """The global dict passed as the argument on some calls, a fresh one on others: each
    call's writes land where eager's do (the global's counter counts both)."""
    static = d2s.to_static(step_shared)
    results = {}
    for mode, fn in (("eager", step_shared), ("static", static)):
        SHARED.clear()
        out, objs = [], []
        for i, v in enumerate(INPUTS):
            x = rt.to_tensor(np.array(v, "float32"))
            m = SHARED if i in (1, 3) else {}
            out.append(fn(x, m))
            objs.append(m)
        results[mode] = (out, _plain(objs), dict(SHARED))
    assert_same_leaves(results["static"], results["eager"], "calls")


def step_reads_field(x, cfg):
    cfg.calls += 1
    return x * cfg.scale


def test_a_fresh_namespace_with_another_value_read_traces_again():
    """A field the trace read (`cfg.scale`) differs: another program, never the old one."""
    static = d2s.to_static(step_reads_field)
    for scale in (1.0, 2.0, 1.0, 3.0, 2.0):
        x = rt.to_tensor(np.array([1.0, 2.0], "float32"))
        got = static(x, types.SimpleNamespace(calls=0, scale=scale))
        np.testing.assert_allclose(got.numpy(), [scale, 2 * scale])
    assert static.program_cache.traces == 3


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = rt.nn.Linear(2, 2)
        self.b = rt.nn.Linear(2, 2)

    def forward(self, x, metrics):
        h = self.a(x)
        metrics["steps"] = metrics.get("steps", 0) + 1
        out = self.b(h) if h.mean() > 0 else h * 2.0  # `b` reached on some inputs only
        metrics["loss"] = out.sum().item()
        metrics.setdefault("hist", []).append(float(h.max()))
        return out.sum()


def test_a_layer_step_with_fresh_metrics_trains_as_eager():
    """A Layer's step writing a fresh metrics dict: one program; values, dicts, which
    `.grad` is None and the parameters after SGD steps with momentum and weight decay are
    eager's."""
    rt.seed(3)
    eager, static = Net(), Net()
    static.set_state_dict(eager.state_dict())
    static.forward = d2s.to_static(static.forward)
    opts = [rt.optimizer.Momentum(learning_rate=0.1, momentum=0.9, weight_decay=0.01,
                                  parameters=m.parameters()) for m in (eager, static)]
    for i in range(6):
        xv = np.random.RandomState(i).randn(3, 2).astype("float32")
        got, want = {}, {}
        ls, le = static(rt.to_tensor(xv), got), eager(rt.to_tensor(xv), want)
        assert_same_leaves(ls, le, "loss")
        assert_same_leaves(got, want, "metrics")
        ls.backward()
        le.backward()
        for (name, p), (_, q) in zip(eager.named_parameters(), static.named_parameters(),
                                     strict=True):
            assert (p.grad is None) == (q.grad is None), name
        for opt in opts:
            opt.step()
            opt.clear_grad()
        for (name, p), (_, q) in zip(eager.named_parameters(), static.named_parameters(),
                                     strict=True):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=name)
    assert static.forward.program_cache.traces == 1


def step_returns_state(x, ns):
    ns.k += 1
    return x + 1.0, ns


def test_a_returned_namespace_is_the_calls_own():
    static = d2s.to_static(step_returns_state)
    for _ in range(3):
        ns = types.SimpleNamespace(k=0)
        _, back = static(rt.to_tensor(np.ones(2, "float32")), ns)
        assert back is ns and ns.k == 1
    assert static.program_cache.traces == 1


def step_raising(x, m):
    m["n"] = m.get("n", 0) + 1
    m["loss"] = float(x.sum())
    m.setdefault("hist", []).append(float(x.max()))
    if x.sum() < -10:
        raise ValueError("too negative")
    return x * 2.0


def test_a_raise_leaves_the_calls_own_dict_as_eager_does():
    """A run that raises writes what the call had changed into this call's dict (eager's
    state at the raise), on a program traced for another dict."""
    static = d2s.to_static(step_raising)
    for v in ([1.0, 2.0], [-20.0, 1.0], [3.0, 1.0], [-30.0, 0.0]):
        seen = []
        for fn in (step_raising, static):
            m = {}
            try:
                out = fn(rt.to_tensor(np.array(v, "float32")), m).numpy().tolist()
            except ValueError as e:
                out = str(e)
            seen.append((out, m))
        assert seen[1] == seen[0]
    assert static.program_cache.traces == 1


CURRENT = {}
LOSSES = []


def _record(metrics, name, value):
    metrics[name] = value


def step_script(x, metrics):
    _record(metrics, "loss", float(x.mean()))  # a helper the step names (a global)
    LOSSES.append(metrics)
    metrics["n"] = metrics.get("n", 0) + 1
    return x * 2.0 if x.sum() > 0 else x


def test_a_script_whose_metrics_dict_is_a_module_global():
    """A training script's loop at module level: `metrics = {}` is a global of the module the
    step's helpers live in (reachable through the globals dict the program names), a fresh
    one per step; a global list keeps every step's dict."""
    global CURRENT
    static = d2s.to_static(step_script)
    for fn in (step_script, static):
        LOSSES.clear()
        kept = []
        for v in INPUTS:
            CURRENT = {}
            x = rt.to_tensor(np.array(v, "float32"))
            want = x.numpy() * 2.0 if x.numpy().sum() > 0 else x.numpy()
            np.testing.assert_allclose(fn(x, CURRENT).numpy(), want)
            kept.append(CURRENT)
            assert CURRENT == {"loss": float(np.float32(np.mean(v))), "n": 1}
        assert len(LOSSES) == len(kept) and all(a is b for a, b in zip(LOSSES, kept))
    assert static.program_cache.traces == 1
