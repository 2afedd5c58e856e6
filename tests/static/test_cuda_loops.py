"""Small tensor loops on the GPU as one CUDA kernel (`runtime/program/cuda_loops.py`), tested
without a GPU: on the fake CuPy (tests/fake_cupy.py) with `tests/cuda_host.py`, which compiles
the very kernel text d2s hands `cupy.RawKernel` as host C++ (a POSIX thread per CUDA thread,
`__syncthreads()` a barrier) and runs it. Each function is converted once and called with
inputs taking each branch, 0 / 1 / many trips, several shapes; the values equal the NumPy
(CPU) program's, eager code's and a NumPy reference, and a call is one kernel launch. The
`gpu` test runs the same on CuPy."""
from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import cuda_loops, native_build, native_loops
from runtime.program.loop_plan import WhilePlan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cuda_host
import fake_cupy

pytestmark = pytest.mark.skipif(cuda_host.COMPILER is None, reason="no C++ compiler")


def gate_while(x):
    """A tensor `if` on a mean, then a 10-step tensor `while` on what it chose."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    i = rt.zeros([1], "int64")
    while i < 10:
        y = y * 0.5 + 1.0
        i += 1
    return y


def numpy_gate_while(x):
    t = x.dtype.type
    y = x * t(2.0) if x.mean() > 0 else -x
    for _ in range(10):
        y = y * t(0.5) + t(1.0)
    return y


def damp(x, bias, n):
    """x <- max(x / 2 + bias, -1), n times: a bias row broadcast over x's rows."""
    i = rt.zeros([1], "int64")
    while i < n:
        x = rt.maximum(x * 0.5 + bias, -1.0)
        i += 1
    return x


def numpy_damp(x, bias, n):
    t = x.dtype.type
    for _ in range(n):
        x = np.maximum(x * t(0.5) + bias, t(-1.0))
    return x


def recurrent(h, w, b, n):
    """A recurrent step with a matmul: h <- tanh(h @ w + b), n times."""
    i = rt.zeros([1], "int64")
    while i < n:
        h = rt.tanh(rt.matmul(h, w) + b)
        i += 1
    return h


def numpy_recurrent(h, w, b, n):
    for _ in range(n):
        h = np.tanh(h @ w + b)
    return h


def _calls() -> int:
    return native_build.stats()["native_calls"]


def _on_fake_gpu(fn, calls_of_args, kernels=True):
    """`fn` converted once on the fake GPU (its kernels compiled by `cuda_host` when
    `kernels`), called with each argument list: (outputs as NumPy arrays, native calls) per
    call."""
    results = []
    with fake_cupy.installed(), cuda_host.installed() if kernels else nullcontext():
        static = d2s.to_static(fn)
        with rt.no_grad():
            for args in calls_of_args:
                before = _calls()
                out = static(*[rt.to_tensor(a) for a in args])
                out = [t.numpy() for t in out] if isinstance(out, (tuple, list)) else \
                    out.numpy()
                results.append((out, _calls() - before))
    return results


def _on_cpu(fn, args, monkeypatch):
    """`fn` converted on NumPy without native code: the reference program."""
    monkeypatch.setenv("D2S_NATIVE", "0")
    with rt.no_grad():
        out = d2s.to_static(fn)(*[rt.to_tensor(a) for a in args]).numpy()
    monkeypatch.setenv("D2S_NATIVE", "1")
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4,), (4, 16), (300,), (64, 64)])
def test_the_if_and_the_loop_are_one_kernel_equal_to_numpy(monkeypatch, dtype, shape):
    rng = np.random.default_rng(3)
    inputs = [(sign * rng.uniform(0.1, 2.0, shape)).astype(dtype) for sign in (1.0, -1.0)]
    RAW = cuda_host.RawKernel.made
    RAW.clear()
    got = _on_fake_gpu(gate_while, [[x] for x in inputs])
    assert len(RAW) == 1 and "__global__ void d2s_loop_" in RAW[0][0]
    assert len(got) == len(inputs)
    for (out, calls), x in zip(got, inputs, strict=True):
        assert calls == 1  # (the mean, the branch and the loop: one launch)
        assert out.dtype == x.dtype and out.shape == x.shape
        np.testing.assert_array_equal(out, numpy_gate_while(x))  # (+ - * /: NumPy's bits)
        np.testing.assert_array_equal(out, _on_cpu(gate_while, [x], monkeypatch))
        with rt.no_grad():
            np.testing.assert_array_equal(out, gate_while(rt.to_tensor(x)).numpy())


@pytest.mark.parametrize("shape", [(3,), (5, 7), (2, 40, 8)])
def test_zero_one_and_many_trips_with_a_broadcast_row(monkeypatch, shape):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype("float32")
    bias = rng.standard_normal(shape[-1:]).astype("float32")
    trips = [0, 1, 9]
    got = _on_fake_gpu(damp, [[x, bias, np.array([n], "int64")] for n in trips])
    assert len(got) == len(trips)
    for (out, calls), n in zip(got, trips, strict=True):
        assert calls == 1
        np.testing.assert_array_equal(out, numpy_damp(x, bias, n))
        np.testing.assert_array_equal(
            out, _on_cpu(damp, [x, bias, np.array([n], "int64")], monkeypatch))


def halve_until(x, y, limit):
    """A loop whose trips depend on the data: halve x (and double y) while x > limit."""
    while x > limit:
        x = x * 0.5
        y = rt.minimum(y * 2.0, 1e30)
    return x + y


@pytest.mark.parametrize("x0,trips", [(0.5, 0), (1.5, 1), (1000.0, 10)])
def test_data_dependent_trips(monkeypatch, x0, trips):
    y = np.random.default_rng(12).standard_normal((3, 20)).astype("float32")
    ((out, calls),) = _on_fake_gpu(halve_until, [[np.array([x0], "float32"), y,
                                                  np.array([1.0], "float32")]])
    assert calls == 1
    want = np.float32(x0) * np.float32(0.5) ** trips + np.minimum(y * np.float32(2 ** trips),
                                                                  np.float32(1e30))
    np.testing.assert_array_equal(out, want)


def count_down(x, limit):
    """int32 carried values wrapping around, a condition of two comparisons."""
    steps = rt.zeros([1], "int32")
    total = rt.zeros([3], "int32")
    while rt.logical_and(x > 1, steps < limit):
        x = x - 1
        steps = steps + 1
        total = total * 3 + steps
    return x, steps, total


def test_integer_values_and_a_logical_condition():
    cases = [(0, 5), (2, 5), (40, 100), (40, 7)]
    got = _on_fake_gpu(count_down, [[np.array([x], "int32"), np.array([n], "int32")]
                                    for x, n in cases])
    assert len(got) == len(cases)
    for (out, calls), (x, n) in zip(got, cases, strict=True):
        assert calls == 1
        k = min(max(x - 1, 0), n)
        total = np.zeros(3, "int32")
        with np.errstate(over="ignore"):
            for s in range(1, k + 1):
                total = total * np.int32(3) + np.int32(s)  # (3**39 wraps around int32)
        assert [a.dtype for a in out] == [np.dtype("int32")] * 3
        np.testing.assert_array_equal(out[0], [x - k if x > 1 else x])
        np.testing.assert_array_equal(out[1], [k])
        np.testing.assert_array_equal(out[2], total)


def test_a_matmul_body(monkeypatch):
    rng = np.random.default_rng(5)
    h = rng.standard_normal((4, 16)).astype("float32")
    w = (rng.standard_normal((16, 16)) * 0.3).astype("float32")
    b = rng.standard_normal(16).astype("float32")
    trips = [0, 1, 10]
    got = _on_fake_gpu(recurrent, [[h, w, b, np.array([n], "int64")] for n in trips])
    assert len(got) == len(trips)
    for (out, calls), n in zip(got, trips, strict=True):
        assert calls == 1
        # (the products summed in order, tanh from the C library: NumPy's within roundings)
        np.testing.assert_allclose(out, numpy_recurrent(h, w, b, n), rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(
            out, _on_cpu(recurrent, [h, w, b, np.array([n], "int64")], monkeypatch),
            rtol=2e-5, atol=2e-6)


def test_a_paused_loop_is_resumed_by_the_next_launch(monkeypatch):
    """A call stops after `trips_per_call` iterations and the caller launches again from the
    carried values (a loop that never ends stays interruptible)."""
    monkeypatch.setattr(native_loops, "TRIPS_PER_CALL", 4)
    launches = []
    launch = cuda_host.RawKernel.__call__
    monkeypatch.setattr(cuda_host.RawKernel, "__call__",
                        lambda self, *a: launches.append(a[2][-1]) or launch(self, *a))
    x = np.random.default_rng(6).standard_normal((2, 8)).astype("float64")
    bias = np.linspace(-1, 1, 8)
    ((out, calls),) = _on_fake_gpu(damp, [[x, bias, np.array([10], "int64")]])
    assert calls == 1 and launches == [0, 1, 1]  # (4 + 4 + 2 trips; resume flag last)
    np.testing.assert_array_equal(out, numpy_damp(x, bias, 10))


def test_large_values_keep_the_per_op_path(monkeypatch):
    """Beyond one block's size (4096 elements per value) the loop runs op by op: no kernel,
    the same values."""
    x = np.random.default_rng(7).uniform(0.1, 2.0, (80, 80)).astype("float32")
    cuda_host.RawKernel.made.clear()
    ((out, calls),) = _on_fake_gpu(gate_while, [[x]])
    assert calls == 0 and not cuda_host.RawKernel.made
    np.testing.assert_array_equal(out, numpy_gate_while(x))


def test_buffers_past_shared_memory_go_to_scratch_memory():
    """float64 [4096]: one buffer of 32 KiB fills the 48 KiB of shared memory as far as it
    can, the others are in the caller's scratch buffer; the values are the same."""
    x = np.random.default_rng(11).uniform(-2.0, 2.0, 4096)
    cuda_host.RawKernel.made.clear()
    ((out, calls),) = _on_fake_gpu(gate_while, [[x]])
    ((code, _),) = cuda_host.RawKernel.made
    assert calls == 1 and "__shared__ double b2[4096];" in code
    assert "double *__restrict__ b3 = (double *)(scratch + 0);" in code
    np.testing.assert_array_equal(out, numpy_gate_while(x))


def test_without_raw_kernels_or_with_native_code_off_the_per_op_path_runs(monkeypatch):
    x = np.random.default_rng(8).uniform(0.1, 2.0, (4, 16)).astype("float32")
    ((out, calls),) = _on_fake_gpu(gate_while, [[x]], kernels=False)
    assert calls == 0
    np.testing.assert_array_equal(out, numpy_gate_while(x))
    monkeypatch.setenv("D2S_NATIVE", "0")
    ((out, calls),) = _on_fake_gpu(gate_while, [[x]])
    assert calls == 0
    np.testing.assert_array_equal(out, numpy_gate_while(x))


def test_a_kernel_text_is_cuda_not_host_c():
    """The text handed to CuPy declares nothing the shim provides: NVRTC compiles it."""
    x = np.random.default_rng(9).uniform(0.1, 2.0, (4, 16)).astype("float32")
    cuda_host.RawKernel.made.clear()
    _on_fake_gpu(gate_while, [[x]])
    ((code, name),) = cuda_host.RawKernel.made
    assert code.startswith("/* generated by d2s (runtime/program/cuda_loops.py)")
    for host_only in ("pthread", "threadIdx;", "fenv", "memcpy", "0x1."):
        assert host_only not in code
    assert f'extern "C" __global__ void {name}(' in code and "__syncthreads();" in code
    assert cuda_host.parameters(code, name)[:3] == ["char *__restrict__", "char *__restrict__",
                                                    "int *__restrict__"]
    assert cuda_loops.threads(WhilePlan(name, 1)) == 32


@pytest.mark.gpu
def test_real_kernels_equal_numpy():
    pytest.importorskip("cupy")
    x = np.random.default_rng(10).uniform(-2.0, 2.0, (4, 16)).astype("float32")
    rt.set_device("gpu")
    try:
        static = d2s.to_static(gate_while)
        outs = []
        for v in (x, -x):
            before = _calls()
            outs.append(static(rt.to_tensor(v)).numpy())
            assert _calls() - before == 1
    finally:
        rt.set_device("cpu")
    for out, v in zip(outs, (x, -x), strict=True):
        np.testing.assert_array_equal(out, numpy_gate_while(v))
