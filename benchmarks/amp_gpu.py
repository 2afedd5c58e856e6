"""Mixed precision on the GPU: does float16 reach the tensor cores? Plain CuPy matmuls in
float32 and float16 (TFLOP/s), and a converted 3-layer MLP (`@d2s.to_static`) in float32
against the same under `rt.amp.auto_cast(dtype="float16")`, with the largest difference of
its outputs from float32.

    python benchmarks/amp_gpu.py [--device gpu] [--size 4096] [--repeat 5] [--number 10]

On a GPU with tensor cores (Volta and later) a float16 matmul runs several times faster than
a float32 one (cuBLAS computes it on the tensor cores, accumulating in float32); the table's
last column says how much. `--device cpu` runs the same script on NumPy (float16 is emulated
there: it shows the script works, not speed), which is what the tests do.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from runtime import backend  # noqa: E402


class MLP(rt.nn.Layer):
    def __init__(self, n: int):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = (rt.nn.Linear(n, n), rt.nn.Linear(n, n),
                                        rt.nn.Linear(n, n))

    def forward(self, x):
        return self.fc3(rt.nn.functional.relu(self.fc2(rt.nn.functional.relu(self.fc1(x)))))


def _sync() -> None:
    if backend.XP is not np:
        backend.XP.cuda.Device().synchronize()


def best_ms(fn, repeat: int, number: int) -> float:
    fn()
    _sync()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        _sync()
        best = min(best, (time.perf_counter() - start) / number * 1e3)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="gpu")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--number", type=int, default=10)
    args = ap.parse_args(argv)
    if args.device == "gpu":
        if not rt.is_compiled_with_cuda():
            print("amp_gpu: no usable CuPy + CUDA device here", file=sys.stderr)
            return 2
        rt.set_device("gpu")
    xp, n = backend.XP, args.size
    rng = np.random.default_rng(0)
    host = (rng.standard_normal((n, n)) / np.sqrt(n)).astype("float32")
    rows = []
    flops = 2.0 * n ** 3
    matmul_ms = {}
    for dtype in ("float32", "float16"):
        a = xp.asarray(host.astype(dtype))
        ms = best_ms(lambda a=a: xp.matmul(a, a), args.repeat, args.number)
        matmul_ms[dtype] = ms
        rows.append((f"plain {'CuPy' if xp is not np else 'NumPy'} matmul [{n}, {n}], {dtype}",
                     ms, f"{flops / ms / 1e9:.3g} TFLOP/s", ""))
    rt.seed(0)
    model = MLP(n)
    static = d2s.to_static(model)
    x = rt.to_tensor(host)
    cast = rt.amp.auto_cast(dtype="float16")

    def run32():
        with rt.no_grad():
            return static(x)

    def run16():
        with rt.no_grad(), cast:
            return static(x)

    ref = run32().numpy()
    low = run16()
    diff = float(np.max(np.abs(low.numpy().astype("float32") - ref)) /
                 max(float(np.max(np.abs(ref))), 1e-30))
    mlp_ms = {"float32": best_ms(run32, args.repeat, args.number),
              "float16": best_ms(run16, args.repeat, args.number)}
    mlp_flops = 3 * flops
    rows.append((f"to_static MLP {n}-{n}-{n}-{n}, batch {n}, float32", mlp_ms["float32"],
                 f"{mlp_flops / mlp_ms['float32'] / 1e9:.3g} TFLOP/s", ""))
    rows.append((f"same under auto_cast(dtype='float16') (output {low.dtype.name})",
                 mlp_ms["float16"], f"{mlp_flops / mlp_ms['float16'] / 1e9:.3g} TFLOP/s",
                 f"max |diff| / max |float32| = {diff:.1e}"))
    print(f"| {backend.get_device()} | ms | throughput | note |\n|---|---:|---:|---|")
    for label, ms, rate, note in rows:
        print(f"| {label} | {ms:.3f} | {rate} | {note} |")
    plain = matmul_ms["float32"] / matmul_ms["float16"]
    print(f"\nfloat16 / float32 speed: plain matmul {plain:.2f}x, converted MLP under "
          f"auto_cast {mlp_ms['float32'] / mlp_ms['float16']:.2f}x (tensor cores: several x "
          "on a GPU; below 1 on the CPU, where float16 is emulated)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
