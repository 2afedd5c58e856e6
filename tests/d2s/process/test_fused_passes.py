"""`builtin_calls` and `call_trees` run in one walk (`converters/builtins_then_calls.py`)
where both run: the converted code is the same as with the passes one at a time, and runs as
eager code does."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import transpile


class Scale(rt.nn.Layer):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x * self.k


LAYERS = [Scale(2.0), Scale(3.0)]


def helper(x):
    return x + 1.0


def builtins_and_user_calls(x, i):
    names = ["a", "b", "a"]
    n = len(names) + names.index("b") + names.count("a")  # 3 + 1 + 2
    rows = x.shape[0]
    label = "%d rows" % rows  # noqa: UP031  (the `%` formatting the pass converts)
    text = f"{label}: {n:>3}"
    y = helper(x) * float(n) + LAYERS[i](x)
    for k in range(len(text) % 3):
        y = y + rt.tanh(y) * k
    if y.mean() > 0:
        y = helper(y)
    return y, max(n, rows), text


def reference(a, i):
    n, rows = 6, a.shape[0]
    text = f"{rows} rows: {n:>3}"
    y = (a + 1.0) * float(n) + a * (2.0, 3.0)[i]
    for k in range(len(text) % 3):
        y = y + np.tanh(y) * k
    if y.mean() > 0:
        y = y + 1.0
    return y, max(n, rows), text


def test_the_fused_walk_writes_the_code_of_the_two_passes():
    fused = transpile.convert_source(builtins_and_user_calls, 99)
    original = transpile._fused
    transpile._fused = lambda name, module, rest, present: module
    try:
        apart = transpile.convert_source(builtins_and_user_calls, 99)
    finally:
        transpile._fused = original
    assert fused == apart
    for wanted in ("_d2s.len_(names)", "_d2s.list_query(names, 'index')", "_d2s.shape(x)",
                   "_d2s.percent('%d rows', rows)", "_d2s.call(helper)(x)",
                   "_d2s.call_item(LAYERS, i)(x)", "_d2s.max_(n, rows)"):
        assert wanted in fused


@pytest.mark.parametrize("a", [np.array([[1.0, -2.0], [0.5, 0.25]], "float32"),
                               np.array([[-3.0, -2.0], [-0.5, -4.0]], "float32")])
@pytest.mark.parametrize("i", [0, 1])
def test_converted_code_runs_as_eager_code_on_both_sides_of_its_if(a, i):
    static = d2s.to_static(builtins_and_user_calls)
    want = reference(a, i)
    for out in (builtins_and_user_calls(rt.to_tensor(a), i), static(rt.to_tensor(a), i)):
        assert len(out) == len(want)
        np.testing.assert_allclose(out[0].numpy(), want[0], rtol=1e-5)
        assert out[1:] == want[1:]
