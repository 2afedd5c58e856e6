"""Fused elementwise chains give the answers of unfused execution, on every program of the
d2s corpus (fusion forced on its small tensors) and on large hand-written chains."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import fusion
from tests.d2s.corpus.registry import CASES
from tests.d2s.corpus.test_corpus import _call, _make_layer, assert_same

from tests.d2s.corpus import (  # noqa: F401  isort: skip  (registers the cases)
    cases_if, cases_while, cases_for, cases_break_continue, cases_return, cases_logical,
    cases_assert_print_len_cast, cases_list_dict, cases_calls, cases_misc, cases_layers)

FUSED_PROGRAMS = []


def _run_case(c, monkeypatch, fused: bool):
    monkeypatch.setenv("D2S_FUSION", "1" if fused else "0")
    target = _make_layer(c) if c.is_layer else c.fn
    sf = d2s.to_static(target)
    outs = [_call(sf, args, c.raises)[0] for args in c.args]
    if fused:
        for entry in _entries(sf):
            if " = FU" in entry.compiled.source:
                FUSED_PROGRAMS.append(c.name)
    return outs


def _entries(sf):
    forward = sf.forward if hasattr(sf, "forward") else sf
    cache = forward.program_cache
    return [e for key in cache for e in cache._entries[key]]


@pytest.mark.parametrize("c", [c for c in CASES], ids=[c.name for c in CASES])
def test_fused_and_unfused_agree_on_the_corpus(c, monkeypatch):
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(fusion, "CHUNK_ELEMENTS", 3)  # several chunks even on tiny tensors
    try:
        reference = _run_case(c, monkeypatch, fused=False)
    except Exception:  # noqa: BLE001  (cases the corpus marks as known failures)
        pytest.skip("the case does not convert unfused either (a known corpus failure)")
    fused = _run_case(c, monkeypatch, fused=True)
    for i, (want, got) in enumerate(zip(reference, fused)):
        assert_same(want, got, 1e-6, 1e-7, f"{c.name} call {i}")


def test_some_corpus_programs_were_fused(monkeypatch):
    """(So the comparison above compares something.)"""
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 1)
    FUSED_PROGRAMS.clear()
    for c in CASES:
        try:
            _run_case(c, monkeypatch, fused=True)
        except Exception:  # noqa: BLE001, S112  (known corpus failures)
            continue
    assert len(set(FUSED_PROGRAMS)) >= 5, FUSED_PROGRAMS


def chain(x, b):
    y = rt.tanh(x * 0.5 + b) * x
    z = rt.exp(-rt.abs(y)) - 1.0
    return rt.maximum(z, y * y) / 3.0


def test_a_large_chain_is_fused_and_exact_on_one_and_two_threads(monkeypatch):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((1024, 1100)).astype("float32")  # > PARALLEL_ELEMENTS
    ba = rng.standard_normal(1100).astype("float32")
    x, b = rt.to_tensor(xa), rt.to_tensor(ba)
    monkeypatch.setenv("D2S_FUSION", "0")
    with rt.no_grad():
        want = d2s.to_static(chain)(x, b).numpy()
    monkeypatch.setenv("D2S_FUSION", "1")
    for parallel in (fusion.PARALLEL_ELEMENTS, 1 << 62):
        monkeypatch.setattr(fusion, "PARALLEL_ELEMENTS", parallel)
        sf = d2s.to_static(chain)
        with rt.no_grad():
            got = sf(x, b).numpy()
        np.testing.assert_array_equal(got, want)
        assert "FU" in sf.program_cache.last.compiled.source


def test_gradients_through_a_fused_forward_match(monkeypatch):
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((300, 300)).astype("float32")
    ba = rng.standard_normal(300).astype("float32")
    grads = []
    for flag in ("0", "1"):
        monkeypatch.setenv("D2S_FUSION", flag)
        x = rt.to_tensor(xa, stop_gradient=False)
        b = rt.to_tensor(ba, stop_gradient=False)
        d2s.to_static(chain)(x, b).sum().backward()
        grads.append((x.grad.numpy(), b.grad.numpy()))
    for a, bgrad in zip(grads[0], grads[1]):
        np.testing.assert_allclose(a, bgrad, rtol=1e-6, atol=1e-6)
