"""Fused elementwise chains (`runtime/program/fusion.py`) against plain NumPy, on large
tensors: GELU (tanh form, and exact: `F.gelu`), softmax over the last axis, bias + residual
+ LayerNorm, and an Adam update, in ms per call.

    python benchmarks/fusion.py [--repeat 7] [--number 3] [--rows 2048] [--cols 1024]

Rows, measured side by side in interleaved rounds: plain NumPy (the same expression), the
converted function without fusion (`D2S_FUSION=0` when it was compiled), fused as chunked
NumPy code (`D2S_NATIVE=0`) on one thread and on all cores, fused as generated C
(`runtime/program/native.py`, built before timing) on one thread and on all cores; ratios
are to plain NumPy. PyTorch eager and `torch.compile` columns are added where torch is
installed, JAX `jit` where jax is.

A second table gives first calls (convert, trace, compile, run) of each workload: unfused,
fused NumPy, fused C with a cold cache (`D2S_NATIVE=1`: GELU and LayerNorm, whose C code is
not NumPy's to the bit, compile before the call; Adam's compiles on a background thread while
the call uses the NumPy code), the time that compile took, and fused C with the cache warm.
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from runtime.program import threads  # noqa: E402


from fusion_workloads import (adam, bias_residual_layernorm, gelu, gelu_exact,  # noqa: E402
                              numpy_gelu, numpy_softmax, softmax)


class _CP:
    """The plain-CuPy reference (`--device gpu`)."""

    @staticmethod
    def tanh(x):
        import cupy
        return cupy.tanh(x)

    @staticmethod
    def sqrt(x):
        import cupy
        return cupy.sqrt(x)

    @staticmethod
    def softmax(x):
        import cupy
        e = cupy.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    @staticmethod
    def gelu(x):
        from cupyx.scipy.special import erf
        return 0.5 * x * (1.0 + erf(x * x.dtype.type(0.7071067811865476)))

    @staticmethod
    def mean(x, axis, keepdims):
        return x.mean(axis=axis, keepdims=keepdims)


# runtime spells these as NumPy does; these wrappers give each function one namespace
class _NP:
    tanh, sqrt, gelu = staticmethod(np.tanh), staticmethod(np.sqrt), staticmethod(numpy_gelu)
    softmax = staticmethod(numpy_softmax)

    @staticmethod
    def mean(x, axis, keepdims):
        return np.mean(x, axis=axis, keepdims=keepdims)


class _RT:
    tanh, sqrt = staticmethod(rt.tanh), staticmethod(rt.sqrt)
    gelu = staticmethod(rt.nn.functional.gelu)

    @staticmethod
    def softmax(x):
        return rt.nn.functional.softmax(x, axis=-1)

    @staticmethod
    def mean(x, axis, keepdims):
        return rt.mean(x, axis=axis, keepdim=keepdims)


def gelu_rt(x):
    return gelu(x, _RT)


def gelu_exact_rt(x):
    return gelu_exact(x, _RT)


def softmax_rt(x):
    return softmax(x, _RT)


def ln_rt(x, bias, res):
    return bias_residual_layernorm(x, bias, res, _RT)


def adam_rt(p, g, mom, vel):
    return adam(p, g, mom, vel, _RT)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=3)
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=threads.num_threads(),
                    help="threads of the last fused column (default: the cores)")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                    help="gpu: CuPy rows (plain CuPy, static unfused, static fused = one "
                         "generated ElementwiseKernel per run), each call synchronized")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    shape = (args.rows, args.cols)
    xa, ra, ga, ma, va, pa = (rng.standard_normal(shape).astype("float32") for _ in range(6))
    va = np.abs(va)
    ba = rng.standard_normal(args.cols).astype("float32")
    m, label, peers = _NP, "plain NumPy", _torch_peers()
    n = args.threads
    settings = (("0", "0", 1), ("1", "0", 1), ("1", "0", n), ("1", "sync", 1), ("1", "sync", n))
    if args.device == "gpu":
        rt.set_device("gpu")
        import cupy
        xa, ra, ga, ma, va, pa, ba = (cupy.asarray(a) for a in (xa, ra, ga, ma, va, pa, ba))
        m, label, peers, settings = _CP, "plain CuPy", [], (("0", "0", 1), ("1", "0", 1))
    workloads = [
        ("GELU (tanh form)", gelu_rt, lambda: gelu(xa, m), (xa,)),
        ("GELU (exact, erf)", gelu_exact_rt, lambda: gelu_exact(xa, m), (xa,)),
        ("softmax (last axis)", softmax_rt, lambda: softmax(xa, m), (xa,)),
        ("bias + residual + LayerNorm", ln_rt, lambda: bias_residual_layernorm(xa, ba, ra, m),
         (xa, ba, ra)),
        ("Adam update", adam_rt, lambda: adam(pa, ga, ma, va, m), (pa, ga, ma, va)),
    ]
    fused_cols = " static fused |" if args.device == "gpu" else \
        f" fused NumPy, 1 thread | fused NumPy, {n} threads | fused C, 1 thread | " \
        f"fused C, {n} threads |"
    jax = _jax_column(args) if args.device == "cpu" else None
    print(f"| workload on [{args.rows}, {args.cols}] float32 | {label} ms | static "
          "unfused |" + fused_cols + "".join(f" {name} |" for name, _ in peers) +
          (f" {jax[0]} |" if jax else ""))
    print("|---|---:|---:|" + "---:|" * (len(settings) - 1 + len(peers) + bool(jax)))
    for name, fn, ref, arrays in workloads:
        tensors = [rt.to_tensor(a) for a in arrays]
        variants = []
        for fused, native, n_threads in settings:
            os.environ["D2S_FUSION"] = fused
            os.environ["D2S_NATIVE"] = native
            sf = d2s.to_static(fn)
            sf.program_cache.max_size = 1
            with rt.no_grad():
                out = sf(*tensors)  # compiled now, with these settings
            want = ref()
            for o, w in zip(out if isinstance(out, tuple) else (out,),
                            want if isinstance(want, tuple) else (want,)):
                np.testing.assert_allclose(o.numpy(), rt.backend.to_numpy(w), rtol=1e-5,
                                           atol=1e-5)
            entry = sf.program_cache.last_entry

            def run(entry=entry, tensors=tensors, n_threads=n_threads):
                threads.set_num_threads(n_threads)  # read by the fused code at run time
                return entry.run(tensors)

            variants.append(run)
            d2s.transpile._CACHE.pop(fn, None)  # the next variant converts and compiles anew
        os.environ.pop("D2S_FUSION", None)
        os.environ.pop("D2S_NATIVE", None)
        for _, make in peers:
            variants.append(make(name, arrays))
        rows = [ref] + variants
        if args.device == "gpu":
            sync = cupy.cuda.Device().synchronize
            rows = [lambda f=f: (f(), sync()) for f in rows]
        best = [float("inf")] * len(rows)
        with rt.no_grad():
            for _ in range(args.repeat):
                for i, f in enumerate(rows):
                    best[i] = min(best[i], timeit.timeit(f, number=args.number) / args.number)
        base = best[0]
        cells = [f"{best[0] * 1e3:.2f}"] + [f"{b * 1e3:.2f} ({b / base:.2f}x)" for b in best[1:]]
        if jax:
            ref_s, jax_s = jax[1][name][:2]
            cells.append(f"{jax_s * 1e3:.2f} ({jax_s / ref_s:.2f}x)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.device == "cpu":
        print()
        first_calls(workloads, jax)


def first_calls(workloads, jax=None) -> None:
    """The first call of each workload converted anew (ms): unfused, fused NumPy, fused C
    with a cold cache (the compiler on a background thread, the call on NumPy code), that
    compile's time, and fused C with the cache warm."""
    import tempfile
    import time

    from runtime.program import native_build
    cold = tempfile.mkdtemp(prefix="d2s-bench-cache-")
    print("| first call, ms | unfused | fused NumPy | fused C, cold cache (GELU, LayerNorm: "
          "compiled first; Adam: in the background) | C compile, s | fused C, warm cache |" +
          (f" {jax[0]} |" if jax else ""))
    print("|---|---:|---:|---:|---:|---:|" + ("---:|" if jax else ""))
    for name, fn, _, arrays in workloads:
        tensors = [rt.to_tensor(a) for a in arrays]
        cells = []
        spent = native_build.stats()["build_seconds"]
        for fused, native, cache in (("0", "0", None), ("1", "0", None), ("1", "1", cold),
                                     ("1", "1", cold)):
            os.environ.update(D2S_FUSION=fused, D2S_NATIVE=native)
            if cache:
                os.environ["D2S_CACHE_DIR"] = cache
                if len(cells) == 2:
                    native_build.forget()  # (the timed table loaded these sources)
            d2s.transpile._CACHE.pop(fn, None)
            sf = d2s.to_static(fn)
            t0 = time.perf_counter()
            with rt.no_grad():
                sf(*tensors)
            cells.append(f"{(time.perf_counter() - t0) * 1e3:.1f}")
            if cache and len(cells) == 3:
                native_build.wait()
                cells.append(f"{native_build.stats()['build_seconds'] - spent:.2f}")
        if jax:
            cells.append(f"{jax[1][name][2] * 1e3:.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for var in ("D2S_FUSION", "D2S_NATIVE", "D2S_CACHE_DIR"):
        os.environ.pop(var, None)
    import shutil
    shutil.rmtree(cold, ignore_errors=True)


def _jax_column(args):
    """(column name, {workload: (NumPy s, jax.jit s)}) or None: JAX measured in this Python
    if it has jax, else in `D2S_BENCH_JAX_PYTHON` (a separate environment), each ratio to
    plain NumPy timed in the same process."""
    import json
    import subprocess

    import fusion_workloads
    sizes = (args.rows, args.cols, args.repeat, args.number)
    try:
        import jax
        return f"JAX {jax.__version__} jit", fusion_workloads.jax_times(*sizes)
    except ImportError:
        pass
    python = os.environ.get("D2S_BENCH_JAX_PYTHON")
    if not python:
        return None
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fusion_workloads.py")
    r = subprocess.run([python, script, "--jax", *map(str, sizes)], capture_output=True,
                       text=True, check=False)
    version = subprocess.run([python, "-c", "import jax; print(jax.__version__)"],
                             capture_output=True, text=True, check=False).stdout.strip()
    if r.returncode != 0:
        print(f"(JAX in {python} failed: {r.stderr.strip().splitlines()[-1:]})")
        return None
    return f"JAX {version} jit (own process)", json.loads(r.stdout)


def _torch_peers() -> list:
    """(column name, make(workload name, arrays) -> callable) for PyTorch where installed:
    eager on one thread and `torch.compile` (one thread), the peers the issue names."""
    try:
        import torch
    except ImportError:
        return []
    torch.set_num_threads(1)

    class _T:
        tanh, sqrt = staticmethod(torch.tanh), staticmethod(torch.sqrt)

        @staticmethod
        def mean(x, axis, keepdims):
            return torch.mean(x, dim=axis, keepdim=keepdims)

    fns = {"GELU (tanh form)": lambda x: gelu(x, _T),
           "GELU (exact, erf)": torch.nn.functional.gelu,
           "softmax (last axis)": lambda x: torch.softmax(x, -1),
           "bias + residual + LayerNorm": lambda x, b, r: bias_residual_layernorm(x, b, r, _T),
           "Adam update": lambda p, g, m, v: adam(p, g, m, v, _T)}

    def eager(name, arrays):
        ts = [torch.from_numpy(a) for a in arrays]
        fn = fns[name]
        return lambda: fn(*ts)

    def compiled(name, arrays):
        ts = [torch.from_numpy(a) for a in arrays]
        fn = torch.compile(fns[name])
        fn(*ts)  # compiled here, not timed
        return lambda: fn(*ts)

    peers = [(f"PyTorch {torch.__version__} eager", eager)]
    if os.environ.get("D2S_BENCH_TORCH_COMPILE", "1") != "0":
        peers.append(("torch.compile", compiled))
    return peers


if __name__ == "__main__":
    main()
