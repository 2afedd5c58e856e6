"""Buffer reuse (`runtime/program/inplace.py`): an elementwise result goes into the array of
an input that dies at that op, and never into an array anything else can see (a feed, a
parameter, a view of either, a value kept for the backward pass or returned)."""
from __future__ import annotations

import tracemalloc

import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

N = (100, 100)  # 40 KB a value: above inplace.MIN_ELEMENTS, below fusion's threshold


def chain(x):
    y = x * 2.0
    z = rt.tanh(y)
    w = z + 1.0
    return rt.exp(w) - 3.0


def _peak(fn):
    fn()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return tracemalloc.get_traced_memory()[1] - base, out
    finally:
        tracemalloc.stop()


def test_a_chain_of_dying_values_lives_in_one_array(monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "0")
    xa = np.linspace(-1, 1, 10000).astype("float32").reshape(N)
    x = rt.to_tensor(xa)
    sf = d2s.to_static(chain)
    with rt.no_grad():
        peak, out = _peak(lambda: sf(x))
    assert sf.program_cache.last_entry.compiled.source.count("out=R") == 4
    assert peak < 1.5 * xa.nbytes, peak  # one result array, not five
    np.testing.assert_allclose(out.numpy(), np.exp(np.tanh(xa * 2) + 1) - 3, rtol=1e-6)
    np.testing.assert_array_equal(x.numpy(), xa)  # the feed is untouched


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([100, 100])
        self.kept = None

    def forward(self, x):
        flat = self.w.reshape([10000])  # a view of the parameter
        bumped = flat + 1.0  # its last use: must not be written
        seen = x.reshape([10000])  # a view of the feed
        y = rt.tanh(seen * 1.0 + bumped)
        return y, y * 2.0  # y is returned: its array is never reused


def test_feeds_parameters_views_and_results_are_never_overwritten(monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "0")
    net = Net()
    wa = net.w.numpy().copy()
    xa = np.random.default_rng(0).standard_normal(N).astype("float32")
    x = rt.to_tensor(xa)
    static = d2s.to_static(net)
    with rt.no_grad():
        y, y2 = static(x)
        y, y2 = static(x)
    np.testing.assert_array_equal(net.w.numpy(), wa)
    np.testing.assert_array_equal(x.numpy(), xa)
    want = np.tanh(xa.reshape(-1) + (wa.reshape(-1) + 1))
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(y2.numpy(), 2 * want, rtol=1e-6)


def square_chain(x):
    y = x * 3.0
    z = y * y  # the backward pass reads y: its array must survive
    return rt.tanh(z + 1.0)


def test_values_saved_for_the_backward_pass_are_not_overwritten(monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "0")
    xa = np.random.default_rng(1).standard_normal(N) * 0.3
    x = rt.to_tensor(xa, dtype='float64', stop_gradient=False)
    d2s.to_static(square_chain)(x).sum().backward()

    assert x.dtype == rt.float64
    # d/dv tanh((3v)^2 + 1), and finite differences on a few elements
    np.testing.assert_allclose(x.grad.numpy(), (1 - np.tanh(9 * xa ** 2 + 1) ** 2) * 18 * xa,
                               rtol=1e-9, atol=1e-12)
    i = (slice(0, 1), slice(0, 5))
    rest = xa.copy()

    def f(v):
        rest[i] = v
        return float(np.tanh((3 * rest[i]) ** 2 + 1).sum())

    np.testing.assert_allclose(x.grad.numpy()[i], numeric_grad(f, xa[i]), rtol=1e-6)
