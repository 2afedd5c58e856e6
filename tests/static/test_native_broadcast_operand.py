"""A fused run's input that arrives as a broadcast of one value (stride 0 on every axis: the
gradient of `loss.sum()` or `loss.mean()`) is read by the C call as one element, through a
variant of the run's C function (`native.scalar_variant`, `native_run.py`), never expanded:
the gradients of converted functions so computed against eager mode and finite differences,
on runs laid out as one flat loop and as rows with reductions."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build
from tests.finite_differences import numeric_grad

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
F = rt.nn.functional


def centred_tanh(x):
    """A flat run forward; backward, a run with a row reduction reading dy."""
    h = x - x.mean(axis=-1, keepdim=True)
    return rt.tanh(h * 0.7) * 2.0


def log_probabilities(x):
    return F.log_softmax(x * 1.5 - 0.5, axis=-1)


def _np_centred_tanh(x):
    return np.tanh((x - x.mean(axis=-1, keepdims=True)) * 0.7) * 2.0


def _np_log_probabilities(x):
    z = x * 1.5 - 0.5
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


CASES = [(centred_tanh, _np_centred_tanh), (log_probabilities, _np_log_probabilities)]


def _expansions(monkeypatch) -> list:
    """The stride-0 arrays made contiguous from now on (the C call's caller binds
    `np.ascontiguousarray` when the converted function is built)."""
    seen = []
    real = np.ascontiguousarray

    def spy(a, *args, **kwargs):
        strides = getattr(a, "strides", None)
        if strides and getattr(a, "size", 0) > 1 and not any(strides):
            seen.append(a.shape)
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np, "ascontiguousarray", spy)
    return seen


@pytest.mark.parametrize("fn, reference", CASES, ids=["centred_tanh", "log_probabilities"])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_gradient_of_a_reduced_loss_equals_finite_differences(monkeypatch, fn, reference,
                                                              reduce):
    monkeypatch.setenv("D2S_FUSION", "test")  # (small runs fused too)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    expanded = _expansions(monkeypatch)
    sf = d2s.to_static(fn)
    rng = np.random.default_rng(3)
    for shape in ((5, 7), (3, 1), (2, 3, 4)):  # rows of 7, single-element rows, 3-D
        xa = rng.standard_normal(shape)
        grads = []
        for run in (sf, fn):
            x = rt.to_tensor(xa, stop_gradient=False)
            before = native_build.stats()["native_calls"]
            loss = getattr(run(x), reduce)()
            loss.backward()
            calls = native_build.stats()["native_calls"] - before
            grads.append(x.grad.numpy())
        got, eager = grads
        want = numeric_grad(lambda v: float(getattr(reference(v), reduce)()), xa)
        assert got.shape == want.shape == eager.shape == xa.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got, eager, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(float(loss), float(getattr(reference(xa), reduce)()),
                                   rtol=1e-12)
    assert calls == 0  # (the last run: eager)
    assert expanded == []
