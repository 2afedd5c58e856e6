"""Programs are guarded by the Python values their trace read from outside the arguments:
attributes, module globals, closure variables and config fields changed between calls give
the answer eager code gives (a new program, or an earlier one whose values match again)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import d2s
import runtime as rt

pytestmark = pytest.mark.filterwarnings("ignore:d2s.*traced:UserWarning")

USE_BIAS = True


class Settings:
    def __init__(self):
        self.depth = 2
        self.decode = "greedy"


SETTINGS = Settings()


class Model(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.mode = "train"
        self.prev = None
        self.steps_seen = 0

    @d2s.to_static
    def forward(self, x):
        h = self.fc(x)
        if self.mode == "train":
            h = rt.tanh(h)
        else:
            h = rt.nn.functional.relu(h)
        for _ in range(SETTINGS.depth):
            h = h * 0.5 + 1
        if SETTINGS.decode == "beam":
            h = h - 1
        if USE_BIAS:
            h = h + 0.25
        if self.prev is not None:
            h = h + self.prev
        if self.steps_seen % 2 == 1:
            h = -h
        return h


def _eager(model, x):
    d2s.enable_to_static(False)
    try:
        return model(x).numpy()
    finally:
        d2s.enable_to_static(True)


def test_attributes_globals_and_config_fields_changed_between_calls():
    global USE_BIAS
    model = Model()
    x = rt.to_tensor(np.random.RandomState(0).rand(2, 3).astype("float32"))
    changes = [
        lambda: None,
        lambda: setattr(model, "mode", "eval"),
        lambda: setattr(SETTINGS, "depth", 3),
        lambda: setattr(SETTINGS, "decode", "beam"),
        lambda: globals().__setitem__("USE_BIAS", False),
        lambda: setattr(model, "prev", rt.full([2, 3], 2.0)),  # None -> a tensor
        lambda: setattr(model, "prev", rt.full([2, 3], -1.0)),  # another tensor
        lambda: setattr(model, "steps_seen", 1),
        lambda: setattr(model, "steps_seen", 2),
    ]
    try:
        for change in changes:
            change()
            np.testing.assert_allclose(model(x).numpy(), _eager(model, x), rtol=1e-6)
        traced = model.forward.program_cache.traces
        # back to the first values: the first program is reused, not traced again
        model.mode, model.prev, model.steps_seen = "train", None, 0
        SETTINGS.depth, SETTINGS.decode, USE_BIAS = 2, "greedy", True
        np.testing.assert_allclose(model(x).numpy(), _eager(model, x), rtol=1e-6)
        assert model.forward.program_cache.traces == traced
    finally:
        SETTINGS.depth, SETTINGS.decode, USE_BIAS = 2, "greedy", True


def make_scaler():
    factor = 2.0

    @d2s.to_static
    def scaled(x):
        return x * factor

    def set_factor(v):
        nonlocal factor
        factor = v

    return scaled, set_factor


def test_closure_variables_changed_between_calls():
    scaled, set_factor = make_scaler()
    x = rt.ones([2])
    for v in (2.0, 3.0, 2.0, -1.0):
        set_factor(v)
        np.testing.assert_allclose(scaled(x).numpy(), [v, v])
    assert len(scaled.program_cache) == 3


class Counter(rt.nn.Layer):
    """A step counter that switches behaviour every k calls (updated inside forward)."""

    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.step = 0

    @d2s.to_static
    def forward(self, x):
        self.step += 1
        if self.step % self.k == 0:
            return x * 10
        return x


def test_a_step_counter_in_forward_switches_every_k_calls():
    static, eager = Counter(), Counter()
    x = rt.ones([1])
    for _ in range(7):
        got = static(x).numpy()
        d2s.enable_to_static(False)
        try:
            want = eager(x).numpy()
        finally:
            d2s.enable_to_static(True)
        np.testing.assert_allclose(got, want)
        assert static.step == eager.step and type(static.step) is int
    # the counter is program state (fed, computed, written back): one program for all calls
    assert len(Counter.forward.__get__(static).program_cache) == 1


def test_the_retrace_warning_names_the_attribute_that_keeps_changing():
    counter = Counter(k=1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(6):
            counter.k = 1000 + i  # changed by the caller between calls: a new program each
            counter(rt.ones([1]))
    msgs = [str(w.message) for w in caught if "traced" in str(w.message)]
    assert msgs and "self.k changed" in msgs[0]


def test_guards_are_kept_with_the_program():
    model = Model()
    model(rt.ones([1, 3]))
    guards = model.forward.program_cache.last_entry.guards
    from d2s.guards import describe
    named = {describe(g) for g in guards}
    assert {"self.mode", "self.prev", "self.steps_seen", "SETTINGS.depth", "SETTINGS.decode",
            "global USE_BIAS"} <= named


STOP_IDS = [0, 2]


def stop_or_step(tok, x):
    if tok in STOP_IDS:
        return x * 10
    if tok not in (5, 6) and x.sum() > 0:
        return x + 1
    return x


def test_membership_tests_with_tensors_are_graph_ops():
    f = d2s.to_static(stop_or_step)
    for t in (0, 2, 3, 5, 6, 7):
        for sign in (1.0, -1.0):
            tok, x = rt.to_tensor(t), rt.full([2], sign)
            want = stop_or_step(tok, x).numpy()  # eager
            np.testing.assert_allclose(f(tok, x).numpy(), want)
    assert len(f.program_cache) == 1
    np.testing.assert_allclose(f(2, rt.ones([2])).numpy(), [10, 10])  # Python ints still work
