"""An object of a plain user class passed fresh on every call (`b = Box(); b.scale = 2.0;
f(x, b)`, an options or state object made per step) is keyed by its class and field values,
as a SimpleNamespace or a dataclass is (`rebinding.py`), not by identity: one program serves
every call whose object holds the same values (it traced once per call). What the program
writes goes to each call's own object, and a field value the trace read that differs traces
anew, as before."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


class Box:
    pass


class Inner:
    def __init__(self, scale):
        self.scale = scale


class State:
    def __init__(self, shift=1.0):
        self.opts = Inner(2.0)
        self.shift = shift
        self.calls = 0
        self.seen_neg = False


def _scaled(x, b):
    return x * b.scale + (1.0 if b.mode == "add" else -1.0)


def step(x, st):
    """Reads nested fields, counts calls, sets a flag under a tensor `if`."""
    st.calls += 1
    y = x * st.opts.scale + st.shift
    if y.min() < 0:
        st.seen_neg = True
    return y


def _box(scale, mode):
    b = Box()
    b.scale, b.mode = scale, mode
    return b


def test_a_fresh_read_only_object_per_call_shares_one_program():
    static = d2s.to_static(_scaled)
    calls = [(2.0, "add")] * 5 + [(3.0, "add"), (2.0, "sub"), (2.0, "add")]
    for i, (scale, mode) in enumerate(calls):
        x = np.full((3,), float(i), np.float32)
        e, s = _scaled(rt.to_tensor(x), _box(scale, mode)), static(rt.to_tensor(x),
                                                                  _box(scale, mode))
        ref = x * scale + (1.0 if mode == "add" else -1.0)
        np.testing.assert_allclose(s.numpy(), ref, rtol=1e-6)
        np.testing.assert_allclose(e.numpy(), ref, rtol=1e-6)
        assert s.dtype == e.dtype and s.stop_gradient == e.stop_gradient
        if i == 4:
            assert len(static.program_cache) == 1
    assert len(static.program_cache) == 3  # (one per set of field values)


def test_each_fresh_object_gets_its_own_writes():
    static = d2s.to_static(step)
    for v in (1.0, -3.0, 2.0, -1.0, 0.5):
        x = np.full((2,), v, np.float32)
        es, ss = State(), State()
        e, s = step(rt.to_tensor(x), es), static(rt.to_tensor(x), ss)
        np.testing.assert_allclose(s.numpy(), x * 2.0 + 1.0, rtol=1e-6)
        np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6)
        assert (ss.calls, ss.seen_neg) == (es.calls, es.seen_neg) == (1, bool(v * 2 + 1 < 0))
        assert type(ss.calls) is int and type(ss.seen_neg) is bool
    assert len(static.program_cache) == 1


def test_one_object_kept_across_calls_still_counts():
    static = d2s.to_static(step)
    es, ss = State(0.0), State(0.0)
    for v in (1.0, -3.0, 2.0, 4.0, 0.5):
        x = np.full((2,), v, np.float32)
        e, s = step(rt.to_tensor(x), es), static(rt.to_tensor(x), ss)
        np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6)
        assert vars(ss).keys() == vars(es).keys()
        assert (ss.calls, ss.seen_neg) == (es.calls, es.seen_neg)
    assert ss.calls == 5 and ss.seen_neg is True
    assert len(static.program_cache) == 2  # (one per value of the flag the `if` keeps)
    fresh = State(0.0)
    static(rt.to_tensor([1.0, 1.0]), fresh)  # (a fresh one after: its own state)
    assert (fresh.calls, fresh.seen_neg, ss.calls) == (1, False, 5)


def test_an_object_the_caller_changes_is_read_again():
    static = d2s.to_static(step)
    st = State()
    static(rt.to_tensor([1.0]), st)
    st.opts.scale = 5.0
    np.testing.assert_allclose(static(rt.to_tensor([1.0]), st).numpy(), [6.0])
    other = State()
    other.opts.scale = 5.0
    np.testing.assert_allclose(static(rt.to_tensor([1.0]), other).numpy(), [6.0])
    assert other.calls == 1 and st.calls == 2
