"""Fused runs on the GPU (`runtime/program/fusion_gpu.py`): one generated ElementwiseKernel
per run. Without a GPU, `fake_cupy` stands in for CuPy and a small interpreter of the
kernel's straight-line body stands in for `ElementwiseKernel` (each `d2s_<op>` device
function is the NumPy ufunc of the op); the `gpu` test runs the real kernels."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.ops.nn import gelu_grad
from runtime.program import fused_kernels, fusion, fusion_gpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cuda_host  # noqa: E402
import fake_cupy  # noqa: E402

_UFUNCS = {"neg": np.negative, "abs": np.absolute, "relu": lambda a: np.maximum(a, 0),
           **{t: lambda *a, f=f: f(*a, out=np.empty_like(a[0]))
              for t, f in fused_kernels.FUNCTIONS.items()}}
_LINE = re.compile(r"^T (v\d+) = d2s_(\w+)\((.*)\);$|^(o\d+) = (v\d+);$")


class FakeElementwiseKernel:
    """Runs the body `fusion_gpu` generates, op by op, with NumPy on the fake device."""

    made: list = []

    def __init__(self, in_params, out_params, operation, name, preamble=""):
        self.n_in = len(in_params.split(","))
        self.lines = [_LINE.match(ln) for ln in operation.splitlines()]
        assert all(self.lines), operation
        assert "d2s_add" in preamble
        FakeElementwiseKernel.made.append((in_params, out_params, operation))

    def __call__(self, *arrays):
        ins, outs = arrays[:self.n_in], arrays[self.n_in:]
        dt = ins[0]._a.dtype
        env = {f"i{k}": a._a for k, a in enumerate(ins)}
        for m in self.lines:
            if m.group(1):
                args = [dt.type(float(a.strip()[4:-1])) if a.strip().startswith("(T)")
                        else env[a.strip()] for a in m.group(3).split(",")]
                fn = _UFUNCS.get(m.group(2)) or getattr(np, m.group(2))
                env[m.group(1)] = fn(*args)
            else:
                outs[int(m.group(4)[1:])]._a[...] = env[m.group(5)]


def gelu(x):
    return 0.5 * x * (1.0 + rt.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def update(p, g, m):
    m = 0.9 * m + 0.1 * g
    return p - 0.01 * rt.maximum(m, -p), m


def _run(fn, arrays, fused, monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "1")
    with fake_cupy.installed():
        if fused:
            monkeypatch.setattr(fake_cupy.FAKE, "ElementwiseKernel", FakeElementwiseKernel,
                                raising=False)
        sf = d2s.to_static(fn)
        with rt.no_grad():
            out = sf(*[rt.to_tensor(a) for a in arrays])
        src = sf.program_cache.last_entry.compiled.source
        got = [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
    monkeypatch.delattr(fake_cupy.FAKE, "ElementwiseKernel", raising=False)
    return got, src


def test_a_gpu_run_is_one_kernel_equal_to_unfused(monkeypatch):
    x = np.random.default_rng(0).standard_normal((64, 33)).astype("float32")
    FakeElementwiseKernel.made.clear()
    want, src0 = _run(gelu, [x], False, monkeypatch)
    got, src = _run(gelu, [x], True, monkeypatch)
    assert " = FU" not in src0 and src.count(" = FU") == 1, src
    in_params, out_params, body = FakeElementwiseKernel.made[-1]
    assert (in_params, out_params) == ("T i0", "T o0")
    assert body.splitlines()[:2] == ["T v0 = d2s_multiply((T)(0.5), i0);",
                                     "T v1 = d2s_multiply((T)(0.044715), i0);"]
    assert body.count("d2s_tanh") == 1 and body.endswith("o0 = v8;")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        got[0], 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3))), rtol=1e-5,
        atol=1e-6)


def test_a_gpu_run_with_two_results_and_a_broadcast_input(monkeypatch):
    rng = np.random.default_rng(1)
    p, g = (rng.standard_normal((50, 20)).astype("float64") for _ in range(2))
    m = rng.standard_normal(20)  # broadcast over the rows
    FakeElementwiseKernel.made.clear()
    want, _ = _run(update, [p, g, m], False, monkeypatch)
    got, src = _run(update, [p, g, m], True, monkeypatch)
    assert " = FU" in src
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    m2 = 0.9 * m + 0.1 * g
    np.testing.assert_allclose(got[1], m2, rtol=1e-12)
    np.testing.assert_allclose(got[0], p - 0.01 * np.maximum(m2, -p), rtol=1e-12)


def test_every_fusible_op_has_its_device_function():
    names = set(fusion_gpu._DEFINED.findall(fusion_gpu.PREAMBLE))
    assert names == set(fusion.UNARY) | set(fusion.BINARY) | set(fusion.KERNEL_OPS)


@pytest.mark.gpu
def test_real_kernels_match_unfused_cupy(monkeypatch):
    cp = pytest.importorskip("cupy")
    x = np.random.default_rng(2).standard_normal((256, 300)).astype("float32")
    outs = []
    for flag in ("0", "1"):
        monkeypatch.setenv("D2S_FUSION", flag)
        rt.set_device("gpu")
        try:
            sf = d2s.to_static(gelu)
            with rt.no_grad():
                outs.append(sf(rt.to_tensor(x)).numpy())
            assert (" = FU" in sf.program_cache.last_entry.compiled.source) == (flag == "1")
        finally:
            rt.set_device("cpu")
    assert cp is not None
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(cuda_host.COMPILER is None, reason="no C++ compiler")
def test_compiled_kernel_bodies_equal_unfused(monkeypatch):
    """The generated preamble and bodies compiled as host C++ (`tests/cuda_host.py`), as
    NVRTC compiles them, on every fusible op: equal to the unfused values (the C library's
    tanh/exp/... within roundings of NumPy's)."""
    def every_op(x, y):
        a = rt.nn.functional.relu(x) * y - rt.abs(x) / (y * y + 1.0)
        b = rt.maximum(rt.sqrt(rt.square(x) + 1.0), -y) + rt.minimum(a, rt.exp(-x))
        c = rt.tanh(b) + rt.sin(a) * rt.cos(x) + rt.log(rt.abs(y) + 2.0) - (-b)
        d = gelu_grad(c, a) + gelu_grad(a, c, approximate=True)  # (a backward's GELU)
        return (F.gelu(c) + F.gelu(a, approximate=True)) * F.sigmoid(x) - rt.erf(y * c) + d

    rng = np.random.default_rng(3)
    for dtype, rtol in (("float32", 2e-6), ("float64", 1e-13)):
        x = rng.standard_normal((40, 30)).astype(dtype)
        y = rng.standard_normal(30).astype(dtype)  # (broadcast over the rows)
        x[0, :3] = np.nan
        want, _ = _run(every_op, [x, y], False, monkeypatch)
        monkeypatch.setenv("D2S_FUSION", "1")
        cuda_host.ElementwiseKernel.made.clear()
        with fake_cupy.installed(), cuda_host.installed():
            sf = d2s.to_static(every_op)
            with rt.no_grad():
                got = sf(rt.to_tensor(x), rt.to_tensor(y)).numpy()
        bodies = [body for _, _, body in cuda_host.ElementwiseKernel.made]
        ops = {ln.split("d2s_")[1].split("(")[0] for body in bodies for ln in body.splitlines()
               if "d2s_" in ln}
        assert ops == set(fusion.UNARY) | set(fusion.BINARY) | set(fusion.KERNEL_OPS)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want[0]))
        np.testing.assert_allclose(got, want[0], rtol=rtol, atol=rtol)
