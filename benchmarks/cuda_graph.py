"""CUDA graphs on the GPU: a converted program called as it is (one Python launch per kernel)
against the same program captured once and replayed (`D2S_CUDA_GRAPH=1`,
`runtime/program/cuda_graph.py`), beside plain CuPy; µs per call, side by side in one run,
with the largest difference of the replayed results from the uncaptured ones.

    python benchmarks/cuda_graph.py [--repeat 7] [--number 200]

Workloads: an MLP 784-256-256-10 at batch 1 (`@d2s.to_static` Layer, no_grad) and a chain of
24 elementwise ops on a [64] tensor (a function), both launch-bound on a GPU. A step of
`benchmarks/gpu_check.sh`; the tests run it on `fake_cupy` (the code path, not the speed).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from amp_gpu import best_ms  # noqa: E402  (timing with a device synchronisation)
from call_path import MLP, _entry  # noqa: E402  (the MLP 784-256-256-10 of the call path)
from runtime import backend  # noqa: E402
from runtime.program import cuda_graph  # noqa: E402


def chain(x):
    for _ in range(8):
        x = rt.tanh(x * 0.9 + 0.1) - 0.05
    return x


def plain_mlp(layer):
    xp = backend.XP
    w = [(lin.weight._data, lin.bias._data) for lin in (layer.fc1, layer.fc2, layer.fc3)]

    def run(x):
        h = xp.maximum(x @ w[0][0] + w[0][1], 0)
        h = xp.maximum(h @ w[1][0] + w[1][1], 0)
        return h @ w[2][0] + w[2][1]
    return run


def plain_chain(x):
    xp = backend.XP
    for _ in range(8):
        x = xp.tanh(x * np.float32(0.9) + np.float32(0.1)) - np.float32(0.05)
    return x


def best_us(fn, repeat: int, number: int) -> float:
    return best_ms(fn, repeat, number) * 1e3


def _converted(make, flag: str, x):
    """`make()` converted with capture on or off, and its first call's result (the setting
    is read when the program is compiled, on that call)."""
    saved = os.environ.get("D2S_CUDA_GRAPH")
    os.environ["D2S_CUDA_GRAPH"] = flag
    try:
        rt.seed(0)
        fn = d2s.to_static(make())
        with rt.no_grad():
            return fn, fn(x).numpy()
    finally:
        if saved is None:
            del os.environ["D2S_CUDA_GRAPH"]
        else:
            os.environ["D2S_CUDA_GRAPH"] = saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=200)
    args = ap.parse_args(argv)
    if not rt.is_compiled_with_cuda():
        print("cuda_graph: no usable CuPy + CUDA device here", file=sys.stderr)
        return 2
    rt.set_device("gpu")
    rng = np.random.default_rng(0)
    workloads = [
        ("MLP 784-256-256-10, batch 1", MLP, plain_mlp,
         rng.standard_normal((1, 784)).astype("float32")),
        ("24 elementwise ops on f32[64]", lambda: chain, lambda _: plain_chain,
         rng.standard_normal(64).astype("float32")),
    ]
    print(f"| {backend.get_device()}, µs per call | plain CuPy | to_static | to_static, "
          "CUDA graph | graph / to_static | captured | max diff |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for label, make, plain_of, host in workloads:
        x = rt.to_tensor(host)
        (off, want), (on, first) = (_converted(make, flag, x) for flag in ("0", "1"))
        with rt.no_grad():
            got = [on(x).numpy() for _ in range(3)]  # the capture, then replays
        diff = max(float(np.max(np.abs(g - want))) for g in [first] + got)
        entry = _entry(on)
        captured = isinstance(entry.compiled.ready().body, cuda_graph.GraphBody) and \
            entry.compiled.ready().body.captured
        plain = plain_of(off)
        xd = x._data

        def run_off():
            with rt.no_grad():
                return off(x)

        def run_on():
            with rt.no_grad():
                return on(x)

        t_plain = best_us(lambda: plain(xd), args.repeat, args.number)
        t_off = best_us(run_off, args.repeat, args.number)
        t_on = best_us(run_on, args.repeat, args.number)
        print(f"| {label} | {t_plain:.1f} | {t_off:.1f} | {t_on:.1f} | {t_on / t_off:.2f}x "
              f"| {'yes' if captured else 'no'} | {diff:.1e} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
