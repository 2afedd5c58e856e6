"""Side effects of converted code on Python state happen on every call, as in eager code
(`d2s/side_effects.py`): stateful layers written as users write them, six or more consecutive
calls, eager vs static vs a NumPy reference, values and the Python state after each call."""
import numpy as np
import pytest

import d2s
import runtime as rt

XS = [np.random.RandomState(i).randn(2, 3).astype("float32") for i in range(7)]


def _pair(cls, *args):
    eager, static = cls(*args), cls(*args)
    static.set_state_dict(eager.state_dict())
    return eager, d2s.to_static(static)


def _programs(layer) -> int:
    return len(layer.forward.program_cache)


class StepSwitch(rt.nn.Layer):
    """Switches behaviour every k calls: a Python `if` on a Python counter."""

    def __init__(self, k=3):
        super().__init__()
        self.k, self.step = k, 0
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        self.step += 1
        if self.step % self.k == 0:
            return self.fc(x) * 2.0
        return self.fc(x)


def test_step_counter_switches_every_k_calls_with_one_program():
    eager, static = _pair(StepSwitch)
    w, b = eager.fc.weight.numpy(), eager.fc.bias.numpy()
    for i, x in enumerate(XS):
        want = (x @ w + b) * (2.0 if (i + 1) % 3 == 0 else 1.0)
        np.testing.assert_allclose(eager(rt.to_tensor(x)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), want, rtol=1e-5)
        assert static.step == eager.step == i + 1 and type(static.step) is int
    assert _programs(static) == 1


class EMA(rt.nn.Layer):
    """Running mean that starts as None, plus a Python call count and a float decay sum."""

    def __init__(self):
        super().__init__()
        self.avg = None
        self.calls = 0
        self.weight_sum = 0.0

    def forward(self, x):
        m = x.mean(axis=0)
        if self.avg is None:
            self.avg = m
        else:
            self.avg = 0.9 * self.avg + 0.1 * m
        self.calls += 1
        self.weight_sum = self.weight_sum * 0.5 + 1.0
        return x - self.avg


def test_ema_cache_starting_none_and_python_counters():
    eager, static = _pair(EMA)
    avg, ws = None, 0.0
    for i, x in enumerate(XS):
        m = x.mean(axis=0)
        avg = m if avg is None else 0.9 * avg + 0.1 * m
        ws = ws * 0.5 + 1.0
        for layer in (eager, static):
            np.testing.assert_allclose(layer(rt.to_tensor(x)).numpy(), x - avg, rtol=1e-5,
                                       atol=1e-6)
            np.testing.assert_allclose(layer.avg.numpy(), avg, rtol=1e-5, atol=1e-6)
            assert layer.calls == i + 1 and type(layer.calls) is int
            assert layer.weight_sum == pytest.approx(ws) and type(layer.weight_sum) is float
    assert _programs(static) == 2  # avg None, then a tensor: one program each


class Accuracy:
    """A metrics object (not a Layer) updated in forward."""

    def __init__(self):
        self.correct = rt.zeros([])
        self.seen = 0

    def update(self, pred, label):
        self.correct = self.correct + (pred == label).astype("float32").sum()
        self.seen += pred.shape[0]


class Classifier(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 4)
        self.metric = Accuracy()

    def forward(self, x, label):
        logits = self.fc(x)
        self.metric.update(logits.argmax(axis=-1), label)
        return logits


def test_metrics_object_updated_in_forward():
    eager, static = _pair(Classifier)
    w, b = eager.fc.weight.numpy(), eager.fc.bias.numpy()
    correct = 0.0
    for i, x in enumerate(XS):
        label = np.array([i % 4, (i + 1) % 4], "int64")
        correct += float(((x @ w + b).argmax(-1) == label).sum())
        for layer in (eager, static):
            layer(rt.to_tensor(x), rt.to_tensor(label))
            assert float(layer.metric.correct.numpy()) == correct
            assert layer.metric.seen == 2 * (i + 1)
    assert _programs(static) == 1


def make_counter():
    hits = 0

    def count_positive(x):
        nonlocal hits
        if x.sum() > 0:  # a tensor condition: the count is program state
            hits += 1
        return x * hits

    return count_positive, lambda: hits


def test_closure_counter_under_a_tensor_condition():
    f_eager, hits_eager = make_counter()
    f, hits = make_counter()
    f = d2s.to_static(f)
    for x in XS:
        np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(),
                                   f_eager(rt.to_tensor(x)).numpy())
        assert hits() == hits_eager() and type(hits()) is int
    assert 0 < hits() < len(XS) and len(f.program_cache) == 1


FLAGS = {"double": False}


def flagged(x):
    if FLAGS["double"]:  # a Python `if` on a global dict read: guarded
        return x * 2.0
    return x + 1.0


def test_global_flag_flipped_between_calls():
    f = d2s.to_static(flagged)
    for i, x in enumerate(XS):
        FLAGS["double"] = i % 2 == 1
        want = x * 2.0 if i % 2 == 1 else x + 1.0
        np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(), want)
    assert len(f.program_cache) == 2
    FLAGS["double"] = False


HITS = 0
MASS = 0.0
PHASE = "warmup"


def count_globally(x):
    global HITS, MASS, PHASE
    if x.sum() > 0:  # module globals rebound under a tensor condition: program state
        HITS += 1
        MASS = MASS + 0.5
    PHASE = "train"  # a Python value only written: replayed after each call, not a guard
    return x * HITS + MASS


def test_module_globals_rebound_under_a_tensor_condition():
    global HITS, MASS, PHASE
    f = d2s.to_static(count_globally)
    hits, mass = 0, 0.0
    for x in XS:
        if x.sum() > 0:
            hits, mass = hits + 1, mass + 0.5
        np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(), x * hits + mass, rtol=1e-6)
        assert (HITS, MASS, PHASE) == (hits, mass, "train")
        assert type(HITS) is int and type(MASS) is float
    assert 0 < hits < len(XS)
    PHASE = "warmup"  # the caller resets it: the program does not read it, so it serves
    f(rt.to_tensor(XS[0]))
    assert PHASE == "train" and len(f.program_cache) == 1
    HITS, MASS, PHASE = 0, 0.0, "warmup"


class LazyInit(rt.nn.Layer):
    """`self.built` flips once; a string attribute records the last mode."""

    def __init__(self):
        super().__init__()
        self.built = False
        self.mode = "none"

    def forward(self, x):
        if not self.built:
            self.built = True
            self.mode = "first"
            return x * 0.0
        self.mode = "later"
        return x * 3.0


def test_flags_and_strings_are_replayed_and_guarded():
    eager, static = _pair(LazyInit)
    for i, x in enumerate(XS):
        for layer in (eager, static):
            first = i in (0, 4)
            np.testing.assert_allclose(layer(rt.to_tensor(x)).numpy(),
                                       x * (0.0 if first else 3.0))
            assert layer.built is True and layer.mode == ("first" if first else "later")
        if i == 3:  # the caller resets the flag: the first-call path runs again
            eager.built = static.built = False
    # one program per value of the flag the trace reads (`mode` is only written)
    assert _programs(static) == 2


def log_shapes(x, log):
    log.append(x.shape[0])  # a Python value appended on every call
    return x * 1.0


def test_a_list_growing_by_python_values_grows_on_every_call():
    f = d2s.to_static(log_shapes)
    log, ref = [], []
    for x in XS[:6]:
        f(rt.to_tensor(x), log)
        log_shapes(rt.to_tensor(x), ref)
        assert log == ref
    assert len(log) == 6


def test_side_effects_of_a_failed_trace_are_undone():
    class Broken(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.step = 0

        def forward(self, x):
            self.step += 1
            return x.reshape([7, 7])  # wrong shape: the trace fails

    layer = d2s.to_static(Broken())
    with pytest.raises(Exception):
        layer(rt.ones([2, 3]))
    assert layer.step == 0


def string_changed_in_tensor_loop(x):
    mode = "start"
    i = rt.zeros([])
    while i < x.sum():
        i = i + 1
        mode = "looping"
    return i, mode


def test_a_string_changed_in_a_tensor_loop_names_the_variable_and_the_assignment():
    with pytest.raises(TypeError) as info:
        d2s.to_static(string_changed_in_tensor_loop)(rt.to_tensor([2.0]))
    msg = str(info.value)
    assert "'mode' is a Python str changed inside a loop whose condition is a tensor" in msg
    assert 'assigned at line' in msg and 'mode = "looping"' in msg
