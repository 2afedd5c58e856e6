"""Bitwise determinism of fused runs with the default `D2S_NATIVE=1` (`native_build.py`): the
same inputs give the same bits on every call of a program, before and after a background
build finishes, and in a process that starts with a cold C cache as in one that finds it
warm.

The runs: a GELU-like chain (tanh, exp: the C library's functions, a few units in the last
place from NumPy's) and a LayerNorm (row means accumulated in double), which are compiled
before their first call when the cache lacks them, and an Adam update (+ - * / sqrt: NumPy's
bits in C too), which runs the NumPy code until its background build is done.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build, native_pool
from tests.static.test_fusion import _np_layer_norm, adam_like, chain, layer_norm

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")

RTOL, ATOL = 1e-5, 1e-6
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _inputs():
    rng = np.random.default_rng(7)
    x, r, g, m = (rng.standard_normal((96, 70)).astype("float32") for _ in range(4))
    v = np.abs(rng.standard_normal((96, 70))).astype("float32")
    b = rng.standard_normal(70).astype("float32")
    return {"chain": (chain, (x, b)), "layer_norm": (layer_norm, (x, b, r)),
            "adam": (adam_like, (x, g, m, v))}


def _np_chain(x, b):
    y = np.tanh(x * np.float32(0.5) + b) * x
    z = np.exp(-np.abs(y)) - np.float32(1)
    return np.maximum(z, y * y) / np.float32(3)


def _np_adam(p, g, m, v):
    m = np.float32(0.9) * m + np.float32(0.1) * g
    v = np.float32(0.999) * v + np.float32(0.001) * (g * g)
    return p - np.float32(0.001) * m / (np.sqrt(v) + np.float32(1e-8))


NUMPY = {"chain": _np_chain, "layer_norm": _np_layer_norm, "adam": _np_adam}


def _first(out):
    return (out[0] if isinstance(out, tuple) else out).numpy()


def _calls(n_calls: int) -> dict:
    """{name: [first output of each call]}: `n_calls` calls of each converted run, waiting
    for the background builds after the third."""
    got = {}
    for name, (fn, arrays) in _inputs().items():
        sf = d2s.to_static(fn)
        tensors = [rt.to_tensor(a) for a in arrays]
        outs = []
        with rt.no_grad():
            for i in range(n_calls):
                if i == 3:
                    assert native_build.wait(120)
                outs.append(_first(sf(*tensors)))
        got[name] = outs
    return got


def _counts():
    s = native_build.stats()
    return s["native_calls"], s["numpy_calls"], s["built"]


@pytest.fixture
def cold_cache(monkeypatch, tmp_path):
    """The default `D2S_NATIVE=1`, every fusible run fused, a C cache folder no process has
    used, and no C function this process loaded before but the thread pool's (loaded first,
    from the usual cache: the builds counted are the runs')."""
    native_pool.available()
    monkeypatch.setenv("D2S_NATIVE", "1")
    monkeypatch.setenv("D2S_FUSION", "test")
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    assert native_build.wait(120)
    native_build.forget()
    return tmp_path


def test_ten_calls_give_the_same_bits_before_and_after_the_build(cold_cache):
    native_before, numpy_before, built_before = _counts()
    got = _calls(10)
    arrays = {name: arrays for name, (_, arrays) in _inputs().items()}
    assert len(got) == len(NUMPY)
    for name, outs in got.items():
        assert len(outs) == 10
        for i, out in enumerate(outs):
            assert out.tobytes() == outs[0].tobytes(), f"{name}: call {i + 1} != call 1"
        np.testing.assert_allclose(outs[0], NUMPY[name](*arrays[name]), rtol=RTOL, atol=ATOL,
                                   err_msg=name)
    native_calls, numpy_calls, built = _counts()
    assert built - built_before == 3  # all three compiled now (the cache was cold)
    assert numpy_calls > numpy_before  # the Adam run's first calls ran the NumPy code
    assert native_calls - native_before >= 10 + 10 + 7  # and every later call the C code


def test_the_adam_run_in_c_equals_the_numpy_code_to_the_bit(cold_cache, monkeypatch):
    """Why it may switch paths on its fifth call: + - * / and sqrt give NumPy's bits in C."""
    fn, arrays = _inputs()["adam"]
    tensors = [rt.to_tensor(a) for a in arrays]
    monkeypatch.setenv("D2S_NATIVE", "0")
    with rt.no_grad():
        want = d2s.to_static(fn)(*tensors)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    native_calls = _counts()[0]
    with rt.no_grad():
        got = d2s.to_static(fn)(*tensors)
    assert _counts()[0] == native_calls + 1
    assert len(got) == len(want) == 3
    for g, w in zip(got, want):
        assert g.numpy().tobytes() == w.numpy().tobytes()


def test_sync_gives_the_bits_of_the_default(cold_cache, monkeypatch):
    default = _calls(4)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    sync = _calls(1)
    assert sorted(default) == sorted(sync) == sorted(NUMPY)
    for name, outs in default.items():
        assert outs[-1].tobytes() == sync[name][0].tobytes(), name


_PROBE = """
import json, sys
import numpy as np
from runtime.program import native_build, threads
from tests.static.test_native_determinism import _calls
got = _calls(5)
native_build.wait(120)
np.savez(sys.argv[1], **{k: np.stack(v) for k, v in got.items()})
print(json.dumps({**native_build.stats(), "pool": threads.pool_threads() > 1}))
"""


def _process(cache, out) -> dict:
    env = dict(os.environ, D2S_NATIVE="1", D2S_FUSION="test", D2S_CACHE_DIR=str(cache),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _PROBE, str(out)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_cold_cache_process_and_a_warm_one_give_the_same_bits(cold_cache, tmp_path):
    """A process that compiles every run (its cache folder is new), then this process
    loading what it built, as a later process would."""
    cold = _process(cold_cache, tmp_path / "cold.npz")
    # compiled (and the C thread pool, with rows split over threads): Adam ran NumPy first
    assert cold["built"] - cold["pool"] == 3 and cold["numpy_calls"] > 0
    _, numpy_calls, built = _counts()
    loaded = native_build.stats()["loaded"]
    warm = _calls(5)
    assert _counts()[1:] == (numpy_calls, built)  # nothing compiled: every call in C
    assert native_build.stats()["loaded"] == loaded + 3
    with np.load(tmp_path / "cold.npz") as c:
        assert sorted(c.files) == sorted(warm) == sorted(NUMPY)
        for name in c.files:
            assert c[name].shape[0] == len(warm[name]) == 5
            assert c[name].tobytes() == np.stack(warm[name]).tobytes(), name
