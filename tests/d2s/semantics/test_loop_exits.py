"""Items 7 and 9: leaving loops under tensor conditions.

- `for`/`while ... else` with a `break` under a tensor condition: a name bound before the
  break and in the `else` is bound after the loop on every path.
- `return a, b` (any structure) from inside a loop under a tensor condition; an early return
  from a loop over a LayerList.
Every case runs eager and static over inputs that take different paths through one program.
"""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(t) for t in v]
    if isinstance(v, dict):
        return {k: _np(t) for k, t in v.items()}
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v).tolist()


def check(fn, inputs, static=None):
    static = static or d2s.to_static(fn)
    for args in inputs:
        args = [rt.to_tensor(np.asarray(a, "float32")) for a in args]
        assert _np(static(*args)) == pytest.approx(_np(fn(*args))) if not isinstance(
            fn(*args), (tuple, list, dict)) else _np(static(*args)) == _np(fn(*args)), args
    return static


def first_negative_while(x):
    i = rt.zeros([], "int64")
    while i < x.shape[0]:
        if x[i] < 0:
            found = i
            break
        i = i + 1
    else:
        found = -1
    return found * 10


def first_negative_for(x):
    total = rt.zeros([])
    for v in x:
        if v < 0:
            where = v * 2
            break
        total = total + v
    else:
        where = total
    return where


def else_without_binding(x):
    s = rt.zeros([])
    for k in range(3):
        if x[k] > 5:
            break
        s = s + x[k]
    else:
        s = s * 100
    return s


@pytest.mark.parametrize("fn", [first_negative_while, first_negative_for,
                                else_without_binding])
def test_loop_else_with_tensor_break(fn):
    check(fn, [([1, -2, 3],), ([1, 2, 3],), ([-1, 9, 3],), ([9, 9, 9],)])


def pair_from_python_loop(x):
    for i in range(3):
        if x[i] < 0:
            return x[i], x * i
    return x[0], x


def dict_from_tensor_while(x):
    i = rt.zeros([], "int64")
    while i < 3:
        if x[i] > 2:
            return {"at": i, "value": x[i]}
        i = i + 1
    return {"at": i * 0 - 1, "value": x.sum()}


def nested_structure(x):
    for v in x:
        if v > 1:
            return (v, [v * 2, v * 3])
    return (x.sum(), [x.mean(), x.max()])


@pytest.mark.parametrize("fn", [pair_from_python_loop, dict_from_tensor_while,
                                nested_structure])
def test_structured_return_from_loop(fn):
    check(fn, [([1, -2, 3],), ([1, 2, 3],), ([0.5, 0.5, 0.5],), ([-1, 0.5, 0.5],)])


class EarlyExit(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = rt.nn.LayerList([rt.nn.Linear(2, 2) for _ in range(3)])

    def forward(self, x):
        for depth, block in enumerate(self.blocks):
            x = rt.tanh(block(x))
            if x.mean() > 0.3:
                return x, depth
        return x, -1


def test_early_return_from_layerlist_loop():
    rt.seed(3)
    net = EarlyExit()
    static = d2s.to_static(net)
    outcomes = set()
    for scale in (-3.0, 0.0, 3.0, 10.0, -10.0):
        x = rt.full([1, 2], scale)
        want, got = net(x), static(x)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-5)
        assert int(np.asarray(_np(got[1]))) == want[1]
        outcomes.add(want[1])
    assert len(outcomes) > 1, "inputs must leave the loop at different depths"
