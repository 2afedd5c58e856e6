"""`self.register_buffer(name, t)` in forward, with a tensor the converted code computes, for
a buffer the layer already has (Llama's rotary cache rebuilt for a longer sequence, a running
summary re-registered under a tensor condition): the buffer is rebound as an assignment
rebinds it, and written back after the call, as eager re-registers it (it raised `TypeError:
... expected a Tensor or None, got Variable`). A buffer the layer does not have yet raises a
TypeError saying to register it in __init__."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn


class RotaryCache(nn.Layer):
    def __init__(self, dim=4, cached=3):
        super().__init__()
        inv = 1.0 / (10000.0 ** (rt.arange(0, dim, 2, dtype="float32") / dim))
        self.register_buffer("inv_freq", inv, persistable=False)
        self._build(cached)

    def _build(self, n):
        self.cached = n
        freqs = rt.outer(rt.arange(n, dtype="float32"), self.inv_freq)
        emb = rt.concat([freqs, freqs], axis=-1)
        self.register_buffer("cos_cached", emb.cos(), persistable=False)

    def forward(self, x, n):
        if n > self.cached:  # (a Python int: the cache grows on some calls)
            self._build(n)
        return x[:, :n] * self.cos_cached[:n]


def _cos_np(n, dim=4):
    inv = 1.0 / (10000.0 ** (np.arange(0, dim, 2, dtype="float32") / dim))
    freqs = np.outer(np.arange(n, dtype="float32"), inv)
    return np.cos(np.concatenate([freqs, freqs], axis=-1))


def test_a_cache_registered_again_for_a_longer_sequence():
    rt.seed(0)
    eager = RotaryCache()
    layer = copy.deepcopy(eager)
    static = d2s.to_static(layer)
    x = rt.to_tensor(np.linspace(-1, 1, 8 * 4, dtype="float32").reshape(1, 8, 4))
    for n in (2, 5, 3, 7, 7):
        want = eager(x, n)
        got = static(x, n)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), x.numpy()[:, :n] * _cos_np(n)[:n], rtol=1e-5)
        assert layer.cached == eager.cached
        assert layer.cos_cached.shape == eager.cos_cached.shape == [max(3, eager.cached), 4]
        assert type(layer.cos_cached) is type(eager.cos_cached)
        np.testing.assert_allclose(layer.cos_cached.numpy(), eager.cos_cached.numpy())
        assert list(layer.state_dict()) == list(eager.state_dict())  # (not persistable)


class Summary(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("peak", rt.zeros([3]))

    def forward(self, x):
        if x.max() > self.peak.max():  # (a tensor condition)
            self.register_buffer("peak", x.max(axis=0))
        return x - self.peak


def test_a_buffer_registered_again_under_a_tensor_if():
    eager = Summary()
    layer = copy.deepcopy(eager)
    static = d2s.to_static(layer)
    rng = np.random.default_rng(0)
    for scale in (1.0, 0.5, 3.0, 2.0):
        x = rt.to_tensor((rng.standard_normal((4, 3)) * scale).astype("float32"))
        np.testing.assert_allclose(static(x).numpy(), eager(x).numpy(), rtol=1e-6)
        np.testing.assert_allclose(layer.peak.numpy(), eager.peak.numpy())
        assert list(layer.state_dict()) == list(eager.state_dict()) == ["peak"]
    assert static.forward.program_cache.traces == 1


class NewBuffer(nn.Layer):
    def forward(self, x):
        self.register_buffer("made", x * 2)
        return x


def test_a_new_buffer_of_a_computed_value_says_where_to_register_it():
    with pytest.raises(TypeError, match=r"register_buffer\('made'\) of a value the converted "
                       r"code computes.*register it in __init__"):
        d2s.to_static(NewBuffer())(rt.ones([2]))
