"""A flag or field assigned only inside a block (`if x.min() < 0: self.seen_neg = True`, the
body of a graph loop) keeps, on the paths that skip the assignment, the value the call found:
the program holds that value, so it is a value read and guarded. The call after one that set
the flag kept it (eager: `True` stays `True`); the converted call put back the value of the
trace (`False`): silently wrong state on Layers, SimpleNamespaces and plain objects."""
from __future__ import annotations

import types

import numpy as np

import d2s
import runtime as rt
from runtime import nn


class Watch(nn.Layer):
    def __init__(self):
        super().__init__()
        self.seen_neg = False
        self.peak = 0.0

    def forward(self, x):
        if x.min() < 0:
            self.seen_neg = True
        i = rt.zeros([], "int64")
        while i < x.shape[0] and x[i] > 10:  # (a graph loop that may run no trip)
            self.peak = 1.0
            i += 1
        return x * 2


class Plain:
    def __init__(self):
        self.seen_neg = False


def mark(x, st):
    if x.min() < 0:
        st.seen_neg = True
    return x + 1


def _ref_flags(values):
    seen, peak = False, 0.0
    for v in values:
        seen = seen or v < 0
        peak = 1.0 if v > 10 else peak
        yield seen, peak


def test_a_layer_flag_set_on_one_call_stays_set():
    eager, static_layer = Watch(), Watch()
    static = d2s.to_static(static_layer)
    values = (1.0, -3.0, 2.0, 20.0, 0.5, 3.0)
    for v, (seen, peak) in zip(values, _ref_flags(values), strict=True):
        x = np.full((2,), v, np.float32)
        e, s = eager(rt.to_tensor(x)), static(rt.to_tensor(x))
        np.testing.assert_array_equal(s.numpy(), e.numpy())
        assert (static_layer.seen_neg, static_layer.peak) == (eager.seen_neg, eager.peak)
        assert (eager.seen_neg, eager.peak) == (seen, peak)
        assert type(static_layer.seen_neg) is bool and type(static_layer.peak) is float
    assert len(static.forward.program_cache) <= 4  # (one per pair of values found)


def test_a_flag_on_an_object_passed_in_stays_set():
    static = d2s.to_static(mark)
    for make in (lambda: types.SimpleNamespace(seen_neg=False), Plain):
        es, ss = make(), make()
        for v in (1.0, -3.0, 2.0, 4.0, -1.0):
            x = np.full((2,), v, np.float32)
            e, s = mark(rt.to_tensor(x), es), static(rt.to_tensor(x), ss)
            np.testing.assert_array_equal(s.numpy(), e.numpy())
            assert ss.seen_neg is es.seen_neg
        assert es.seen_neg is True


class LastRow(nn.Layer):
    """Stores inside a loop that always runs (`range(2)`) and on both paths of an `if` that
    returns: every path writes them, so the values found are no read (one program)."""

    def __init__(self):
        super().__init__()
        self.tag, self.k, self.mode = "none", 0, "none"

    def forward(self, x):
        for i in range(2):
            self.tag = "pos" if float(x[i].sum()) > 0 else "neg"
            self.k = int(x[i].argmax())
        if self.k == 0:
            self.mode = "first"
            return x * 0.0
        self.mode = "later"
        return x * 2.0


def test_stores_every_path_makes_keep_one_program():
    eager, static_layer = LastRow(), LastRow()
    static = d2s.to_static(static_layer)
    rng = np.random.RandomState(0)
    for _ in range(6):
        x = rng.randn(2, 3).astype(np.float32)
        e, s = eager(rt.to_tensor(x)), static(rt.to_tensor(x))
        np.testing.assert_array_equal(s.numpy(), e.numpy())
        got = (static_layer.tag, static_layer.k, static_layer.mode)
        assert got == (eager.tag, eager.k, eager.mode) and type(got[1]) is int
    assert len(static.forward.program_cache) == 1
