"""d2s/program_cache.py driven by values alone: a `TraceTarget` in, an `Entry` out, no
StaticFunction behind it (the spine of docs/architecture.md)."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.program_cache import RETRACE_WARNING, ProgramCache


def _gate(x, w):
    h = rt.matmul(x, w)
    if h.mean() > 0:  # a tensor condition: both paths are in one program
        return rt.tanh(h) * 2.0
    return h * h


def _gate_ref(x, w):
    h = x @ w
    return np.tanh(h) * 2.0 if h.mean() > 0 else h * h


W = np.array([[0.5, -0.2], [0.3, 0.8], [-0.1, 0.4]], np.float32)
POS = np.array([[1.0, 2.0, 0.5], [0.2, 1.0, 1.5]], np.float32)


def test_a_cache_traces_and_runs_a_target_without_its_static_function():
    target = d2s.to_static(_gate).trace_target()
    with pytest.raises(dataclasses.FrozenInstanceError):
        target.training = False  # a value: what a trace was given stays what it was
    cache = ProgramCache()
    w = rt.to_tensor(W)
    outs = []
    for x in (POS, -POS):  # the two branches of one program
        entry, tensors = cache.find(target, (rt.to_tensor(x), w), {})
        assert len(tensors) == 2
        outs.append(entry.run(tensors).numpy())
        np.testing.assert_allclose(outs[-1], _gate_ref(x, W), rtol=1e-6)
    assert len(cache) == cache.traces == 1
    assert entry.name == "_gate" and entry.trace_number == 1
    assert entry.concrete.main_program is cache.last()[1].main_program
    # another shape: another program, traced for the same target
    entry2, _ = cache.find(target, (rt.to_tensor(POS[:1]), w), {})
    assert entry2 is not entry and len(cache) == 2
    assert entry2.previous_key is not None


def test_the_cache_warns_about_retraces_by_the_targets_name():
    target = d2s.to_static(_gate).trace_target()
    cache = ProgramCache()
    w = rt.to_tensor(W)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, RETRACE_WARNING + 1):
            cache.find(target, (rt.to_tensor(np.ones([n, 3], np.float32)), w), {})
    msgs = [str(c.message) for c in caught if "has been traced" in str(c.message)]
    assert len(msgs) == 1
    assert msgs[0].startswith(f"d2s: _gate has been traced {RETRACE_WARNING} times")
    assert "argument 'x': tensor [4, 3] float32 -> tensor [5, 3] float32" in msgs[0]
