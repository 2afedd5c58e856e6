"""d2s's own C math for the generated kernels (`runtime/program/native_math.py`): float32 tanh
as a rational function, checked in units in the last place against float64 tanh over its whole
range, its special values, and GELU (tanh form) fused in C against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import fusion, native, native_build
from runtime.program.native_emit import c_source

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")

MAX_ULP = 6.5  # measured: 6.05 at x = -4.155 (NumPy's float32 tanh: 1.4)


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    want = np.tanh(x.astype(np.float64))
    return np.abs(got.astype(np.float64) - want) / np.spacing(
        np.abs(want).astype(np.float32)).astype(np.float64)


def _in_c(fn, monkeypatch, *arrays):
    """`fn` converted with its fused runs in C (compiled now), and how many C calls ran."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    sf = d2s.to_static(fn)
    before = native_build.stats()["native_calls"]
    with rt.no_grad():
        out = sf(*[rt.to_tensor(a) for a in arrays])
    return out.numpy(), native_build.stats()["native_calls"] - before


def _tanh_times_one(x):
    return rt.tanh(x) * 1.0  # (two ops: a run big enough to fuse; -0.0 stays -0.0)


def test_float32_tanh_in_c_is_within_a_few_ulps_everywhere(monkeypatch):
    grid = np.linspace(-12.0, 12.0, 600_001, dtype=np.float32)
    tiny = np.float32(10.0) ** np.linspace(-30.0, 1.2, 100_000, dtype=np.float32)
    x = np.concatenate([grid, tiny, -tiny, [0.0, -0.0, np.inf, -np.inf]]).astype(np.float32)
    got, calls = _in_c(_tanh_times_one, monkeypatch, x)
    assert calls == 1  # the C function, not NumPy's code
    ulps = _ulps(got, x)
    assert ulps.max() <= MAX_ULP, x[ulps.argmax()]
    assert ulps.mean() < 1.0
    assert np.signbit(got[-3]) and got[-4] == 0.0 and not np.signbit(got[-4])
    np.testing.assert_array_equal(got[-2:], [1.0, -1.0])
    np.testing.assert_array_equal(got[np.abs(x) >= 9.0], np.sign(x[np.abs(x) >= 9.0]))


def test_nan_stays_nan(monkeypatch):
    x = np.linspace(-3.0, 3.0, 300_000, dtype=np.float32)
    x[[5, 1000]] = np.nan
    got, calls = _in_c(_tanh_times_one, monkeypatch, x)
    assert calls == 1
    assert np.isnan(got[[5, 1000]]).all() and np.isfinite(np.delete(got, [5, 1000])).all()


def gelu(x):
    return 0.5 * x * (1.0 + rt.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@pytest.mark.parametrize("shape", [(512, 300), (3, 170, 257)])
def test_gelu_in_c_equals_numpy(monkeypatch, shape):
    x = (np.random.default_rng(0).standard_normal(shape) * 3.0).astype(np.float32)
    got, calls = _in_c(gelu, monkeypatch, x)
    assert calls == 1
    xd = x.astype(np.float64)
    want = 0.5 * xd * (1.0 + np.tanh(0.7978845608 * (xd + 0.044715 * xd ** 3)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _tanh_run(dtype):
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [6, 5], dtype)
        y = rt.tanh(x) * 2.0
    block = main.global_block()
    group, = fusion.find_groups(block, lambda name, first, last: name == y.name)
    return native.plan_loops(group, block)


def test_float32_tanh_calls_the_own_function_and_float64_the_libraries(monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "test")  # (a small run is fused too)
    single = c_source(_tanh_run("float32"), vector_math=True)
    assert "d2s_tanhf(i0[" in single and "tanhf(float)" not in single
    double = c_source(_tanh_run("float64"), vector_math=True)
    assert "d2s_tanhf" not in double and "tanh(i0[" in double
    assert '__attribute__((simd("notinbranch"))) double tanh(double);' in double
