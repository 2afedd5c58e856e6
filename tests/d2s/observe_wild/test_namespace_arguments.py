"""A `types.SimpleNamespace` passed in (a config, a state record: unhashable, as it defines
`__eq__`, and not weak-referenceable) converts: it is keyed by identity and what the trace
read of its fields is guarded, so a field the caller changes between calls is read anew, a
fresh namespace per call gets its own writes, and Python numbers written on it stay Python
numbers (it was refused with 'neither hashable nor weak-referenceable')."""
import argparse
import types

import numpy as np
import pytest

import d2s
import runtime as rt


def step(x, cfg):
    y = x * cfg.scale
    if y.sum() > 0:                 # a tensor if: both paths in one program
        y = y + cfg.bias
    cfg.calls += 1
    cfg.last = float(y.mean())
    return y


def reference(xv, scale, bias):
    y = np.asarray(xv, "float32") * scale
    return y + bias if y.sum() > 0 else y


INPUTS = [[1.0, 2.0], [-3.0, 1.0], [0.5, 0.5], [-1.0, -1.0]]


@pytest.mark.parametrize("make", [types.SimpleNamespace, argparse.Namespace])
def test_one_namespace_whose_fields_change_between_calls(make):
    static = d2s.to_static(step)
    eager_cfg = make(scale=2.0, bias=1.0, calls=0, last=None)
    static_cfg = make(scale=2.0, bias=1.0, calls=0, last=None)
    for i, xv in enumerate(INPUTS):
        if i == 2:                  # the caller changes a field the trace read
            eager_cfg.scale = static_cfg.scale = 3.0
        x = rt.to_tensor(np.array(xv, "float32"))
        want = step(x, eager_cfg).numpy()
        got = static(x, static_cfg).numpy()
        np.testing.assert_allclose(got, want)
        np.testing.assert_allclose(got, reference(xv, static_cfg.scale, 1.0))
        assert vars(static_cfg) == vars(eager_cfg)
        assert type(static_cfg.last) is float and type(static_cfg.calls) is int


def test_a_fresh_namespace_per_call_gets_its_own_writes():
    static = d2s.to_static(step)
    kept = []
    for xv in INPUTS:
        eager_cfg = types.SimpleNamespace(scale=2.0, bias=0.5, calls=0, last=None)
        static_cfg = types.SimpleNamespace(scale=2.0, bias=0.5, calls=0, last=None)
        x = rt.to_tensor(np.array(xv, "float32"))
        np.testing.assert_allclose(static(x, static_cfg).numpy(), step(x, eager_cfg).numpy())
        kept.append((static_cfg, eager_cfg))
    for static_cfg, eager_cfg in kept:     # earlier calls' objects keep their own state
        assert vars(static_cfg) == vars(eager_cfg)
        assert static_cfg.calls == 1
