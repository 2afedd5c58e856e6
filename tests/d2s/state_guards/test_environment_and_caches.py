"""Two more places a converted function reads that change outside it: the process
environment (`os.environ.get("DEBUG")`, `os.getenv`) and memoised helpers
(`functools.lru_cache` / `cache` / `cached_property`)."""
import functools
import os
from os import getenv

import numpy as np

import d2s
import runtime as rt
from runtime import nn


def _t(a):
    return rt.to_tensor(np.asarray(a, "float32"))


def test_environment_variables_read_by_the_trace_are_guarded(monkeypatch):
    def scaled(x):
        k = float(os.environ.get("D2S_TEST_MUL", "1"))
        if getenv("D2S_TEST_NEG"):
            k = -k
        return x * k

    static = d2s.to_static(scaled)
    cases = [({}, 1.0), ({"D2S_TEST_MUL": "3"}, 3.0),
             ({"D2S_TEST_MUL": "3", "D2S_TEST_NEG": "1"}, -3.0), ({}, 1.0)]
    for env, k in cases:
        monkeypatch.delenv("D2S_TEST_MUL", raising=False)
        monkeypatch.delenv("D2S_TEST_NEG", raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        np.testing.assert_allclose(static(_t([1.0, -2.0])).numpy(), [k, -2.0 * k])
        np.testing.assert_allclose(scaled(_t([1.0, -2.0])).numpy(), [k, -2.0 * k])


@functools.lru_cache(maxsize=None)
def causal_mask(n):
    return rt.tril(rt.ones([n, n]))


def test_lru_cached_helpers_never_cache_a_static_variable():
    def masked(x):
        return x * causal_mask(x.shape[0])

    causal_mask.cache_clear()
    static = d2s.to_static(masked)
    for n in (2, 3, 2):
        np.testing.assert_allclose(static(_t(np.ones((n, n)))).numpy(), np.tril(np.ones((n, n))))
        # the eager call after it gets a Tensor from the cache, not the trace's Variable
        np.testing.assert_allclose(masked(_t(np.ones((n, n)) * 2)).numpy(),
                                   2 * np.tril(np.ones((n, n))))
    assert all(type(causal_mask(n)) is rt.Tensor for n in (2, 3))


class Windowed(nn.Layer):
    def __init__(self, n):
        super().__init__()
        self.n = n

    @functools.cached_property
    def band(self):
        return rt.triu(rt.ones([self.n, self.n]))

    def forward(self, x):
        return x * self.band


def test_cached_property_holds_a_tensor_after_the_call():
    layer = Windowed(3)
    static = d2s.to_static(layer)
    for scale in (1.0, 2.0):
        np.testing.assert_allclose(static(_t(np.full((3, 3), scale))).numpy(),
                                   scale * np.triu(np.ones((3, 3))))
    assert type(vars(layer)["band"]) is rt.Tensor
    np.testing.assert_allclose(layer(_t(np.ones((3, 3)))).numpy(), np.triu(np.ones((3, 3))))
