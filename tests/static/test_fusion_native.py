"""Fused runs as generated C (`runtime/program/native.py`, `native_build.py`) give the answers
of the fused NumPy code and of unfused execution, on every program of the d2s corpus and on
large hand-written chains; and the C code is optional, cached and safe to fall back from.

Tolerances (float32): + - * / and sqrt are correctly rounded in both (no contracted
multiply-adds), so elementwise chains without transcendental functions agree exactly; exp,
log, tanh, sin and cos come from the C library (glibc's vector versions) and differ from
NumPy's by a few units in the last place, and sums and means accumulate in double where
NumPy sums pairwise in float32: rtol 1e-5, atol 1e-6 covers both on these inputs.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build, threads
from tests.d2s.corpus.registry import CASES
from tests.d2s.corpus.test_corpus import assert_same
from tests.static.test_fusion import _run_case, adam_like, chain, layer_norm

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")

RTOL, ATOL = 1e-5, 1e-6
SAMPLE = ("layers.ResidualIfNormLarge", "layers.GatedMLP", "layers.MaskedPool",
          "for.over_tensor_rows", "if.nested_if", "misc.lambdas_with_default_capture",
          "layers.RowwiseLoop", "break_continue.python_continue_nested")


@pytest.fixture
def native(monkeypatch):
    """C code compiled on the calling thread (`sync`), into the default cache folder (so a
    second test run loads instead of compiling)."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    return native_build


def _counts():
    s = native_build.stats()
    return s["native_calls"], s["numpy_calls"]


def _compare_corpus(cases, monkeypatch) -> int:
    """Each case fused with every run in C (`D2S_FUSION=test`: tiny chunks and every fusible
    run, also on the threads), against fused NumPy code and unfused code; how many cases ran
    C code."""
    used = 0
    for c in cases:
        monkeypatch.setenv("D2S_NATIVE", "0")
        try:
            reference = _run_case(c, monkeypatch, fused=False)
        except Exception:  # noqa: BLE001, S112  (known corpus failures)
            continue
        fused_numpy = _run_case(c, monkeypatch, fused=True)
        monkeypatch.setenv("D2S_NATIVE", "sync")
        before = _counts()[0]
        fused_c = _run_case(c, monkeypatch, fused=True)
        used += _counts()[0] > before
        for i, (want, a, b) in enumerate(zip(reference, fused_numpy, fused_c)):
            assert_same(want, a, 1e-6, 1e-7, f"{c.name} call {i} (fused NumPy)")
            assert_same(want, b, RTOL, ATOL, f"{c.name} call {i} (fused C)")
    return used


@pytest.mark.slow  # ~150 C builds on a cold cache (0.1-0.4 s each)
@pytest.mark.time_limit(900)  # (every corpus program three times: ~2 min on a quiet machine)
def test_native_numpy_and_unfused_agree_on_every_corpus_program(monkeypatch, native):
    assert _compare_corpus(CASES, monkeypatch) >= 30


def test_native_numpy_and_unfused_agree_on_a_sample_of_the_corpus(monkeypatch, native):
    sample = [c for c in CASES if c.name in SAMPLE]
    assert len(sample) == len(SAMPLE)
    assert _compare_corpus(sample, monkeypatch) >= 5  # (so it compares something)


def _run(fn, monkeypatch, fusion, native_flag, *arrays):
    monkeypatch.setenv("D2S_FUSION", fusion)
    monkeypatch.setenv("D2S_NATIVE", native_flag)
    sf = d2s.to_static(fn)
    with rt.no_grad():
        out = sf(*[rt.to_tensor(a) for a in arrays])
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def _np_layer_norm(x, bias, res):
    h = x + bias + res
    d = h - h.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + np.float32(1e-5)) * \
        np.float32(0.5)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", [(600, 520), (4, 150, 520)])
def test_large_chains_in_c_equal_numpy_fused_and_unfused(monkeypatch, native, n_threads, shape):
    monkeypatch.setattr(threads, "_threads", n_threads)
    rng = np.random.default_rng(0)
    x, r, g, m = (rng.standard_normal(shape).astype("float32") for _ in range(4))
    v = np.abs(rng.standard_normal(shape)).astype("float32")
    b = rng.standard_normal(shape[-1]).astype("float32")
    for fn, arrays in ((chain, (x, b)), (layer_norm, (x, b, r)), (adam_like, (x, g, m, v))):
        unfused = _run(fn, monkeypatch, "0", "0", *arrays)
        fused = _run(fn, monkeypatch, "1", "0", *arrays)
        calls = _counts()[0]
        in_c = _run(fn, monkeypatch, "1", "sync", *arrays)
        assert _counts()[0] == calls + 1, fn.__name__  # one call of the C function
        for u, f, c in zip(unfused, fused, in_c, strict=True):
            np.testing.assert_array_equal(f, u)
            np.testing.assert_allclose(c, u, rtol=RTOL, atol=ATOL, err_msg=fn.__name__)
    np.testing.assert_allclose(_run(layer_norm, monkeypatch, "1", "sync", x, b, r)[0],
                               _np_layer_norm(x, b, r), rtol=RTOL, atol=ATOL)


def test_arithmetic_only_chains_are_exact(monkeypatch, native):
    def affine(x, w, b):
        y = (x * w + b) / 3.0 - x
        return rt.maximum(y, x * 0.5), rt.sqrt(rt.abs(y))

    rng = np.random.default_rng(1)
    arrays = (rng.standard_normal((512, 300)).astype("float32"),
              rng.standard_normal(300).astype("float32"),
              rng.standard_normal((512, 300)).astype("float32"))
    arrays[0][3, 4] = np.nan
    want = _run(affine, monkeypatch, "0", "0", *arrays)
    with np.errstate(invalid="ignore"):
        got = _run(affine, monkeypatch, "1", "sync", *arrays)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)  # NaN where NumPy has NaN (maximum propagates)


def logs(x):
    return rt.log(x * 2.0 - 1.0) + 1.0


def test_a_floating_point_error_is_numpys_own(monkeypatch, native):
    """The C code returns its exception flags: where NumPy would warn or raise, the NumPy
    code runs instead, so the error names the op as unfused code does."""
    monkeypatch.setenv("D2S_FUSION", "test")
    x = rt.to_tensor(np.linspace(-1, 1, 4000).astype("float32").reshape(200, 20))
    sf = d2s.to_static(logs)
    with rt.no_grad(), np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError) as err:
            sf(x)
    text = "\n".join([str(err.value)] + getattr(err.value, "__notes__", []))
    assert "= log(%t1)" in text, text
    calls = _counts()
    with rt.no_grad(), np.errstate(invalid="ignore"):
        got = sf(x).numpy()
    assert _counts()[0] == calls[0] + 1  # ignored: the C result is used
    with np.errstate(invalid="ignore"):
        want = np.log(x.numpy() * 2 - 1) + 1
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    with rt.no_grad(), pytest.warns(RuntimeWarning):  # NumPy's default: a warning
        sf(x)


def test_first_call_does_not_wait_for_the_compiler(monkeypatch, tmp_path):
    """`D2S_NATIVE=1` (the default): a run whose C code gives NumPy's bits (Adam: + - * /
    sqrt) and is not in the cache is compiled on a background thread; calls run the NumPy
    code until it is ready. (A run with tanh or a row mean is compiled before its first call:
    `test_native_determinism.py`.)"""
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("D2S_NATIVE", "1")
    monkeypatch.setenv("D2S_FUSION", "test")
    assert native_build.wait(120)
    native_build.forget()  # (an earlier test may have loaded this source)
    rng = np.random.default_rng(2)
    p, g, m = (rt.to_tensor(rng.standard_normal((40, 30)).astype("float32")) for _ in "pgm")
    v = rt.abs(p)
    sf = d2s.to_static(adam_like)
    with rt.no_grad():
        numpy_calls = _counts()[1]
        first = sf(p, g, m, v)[0].numpy()
        assert _counts()[1] == numpy_calls + 1
        assert native_build.wait(120)
        calls = _counts()[0]
        second = sf(p, g, m, v)[0].numpy()
    assert _counts()[0] == calls + 1
    np.testing.assert_array_equal(second, first)
    built = [p for p in os.listdir(tmp_path / "native") if p.endswith(".so")]
    assert len(built) == 1, built
    assert os.stat(tmp_path / "native").st_mode & 0o777 == 0o700


def test_no_compiler_or_an_unsafe_cache_means_numpy_code(monkeypatch, tmp_path):
    monkeypatch.setenv("D2S_FUSION", "test")
    monkeypatch.setenv("D2S_NATIVE", "sync")
    x = rt.to_tensor(np.ones((20, 10), "float32"))
    b = rt.to_tensor(np.ones(10, "float32"))
    monkeypatch.setattr(native_build, "_compiler", [None])
    assert native_build.mode() is None
    calls = _counts()
    with rt.no_grad():
        d2s.to_static(chain)(x, b)
    assert _counts()[0] == calls[0]
    monkeypatch.undo()
    monkeypatch.setenv("D2S_FUSION", "test")
    monkeypatch.setenv("D2S_NATIVE", "sync")
    shared = tmp_path / "shared"
    (shared / "native").mkdir(parents=True)
    os.chmod(shared / "native", 0o777)  # others could plant a library here: not used
    monkeypatch.setenv("D2S_CACHE_DIR", str(shared))
    assert native_build.cache_dir() is None
    with rt.no_grad():
        got = d2s.to_static(chain)(x, b).numpy()
    assert _counts()[0] == calls[0]
    assert os.listdir(shared / "native") == []
    monkeypatch.setenv("D2S_NATIVE", "0")
    assert native_build.mode() is None
    np.testing.assert_allclose(got, _run(chain, monkeypatch, "0", "0", np.ones((20, 10),
                               "float32"), np.ones(10, "float32"))[0], rtol=RTOL)
