"""The strided convolution's input gradient (and a transposed convolution, the same map): the C
kernel of `runtime/program/conv_native.py` against the NumPy path it replaces (GEMM + col2im),
in one process, float32.

    python benchmarks/conv_grad_input.py [--repeat 5] [--quick]

Each case times `nn_conv`'s kernel with the C kernels installed and with them removed
(`NATIVE_KERNELS` emptied), alternating, in process CPU time (so load from other processes on
a shared machine does not inflate it), the best of `--repeat` rounds of 5 calls; the results
of the two sides are compared first. Run it with one thread (`D2S_NUM_THREADS=1
OPENBLAS_NUM_THREADS=1`) to compare single-thread speed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import runtime.program  # noqa: F401  (installs the C kernels)
from runtime.ops import nn_conv

# (name, input shape, weight shape, stride, padding); a transposed convolution's weight is
# [C_in, C_out, kh, kw]
CASES = [
    ("ResNet downsampling 3x3 s2, [16, 16, 32, 32] -> 32", (16, 16, 32, 32), (32, 16, 3, 3),
     [2, 2], [1, 1, 1, 1]),
    ("zoo ResNet 3x3 s2, [16, 8, 16, 16] -> 16", (16, 8, 16, 16), (16, 8, 3, 3), [2, 2],
     [1, 1, 1, 1]),
    ("stem 3x3 s2, [16, 3, 32, 32] -> 16", (16, 3, 32, 32), (16, 3, 3, 3), [2, 2],
     [1, 1, 1, 1]),
    ("transposed 4x4 s2, [16, 32, 16, 16] -> 16", (16, 32, 16, 16), (32, 16, 4, 4), [2, 2],
     [1, 1, 1, 1]),
]
QUICK = [("strided 3x3 s2, [2, 4, 8, 8] -> 4", (2, 4, 8, 8), (4, 4, 3, 3), [2, 2],
          [1, 1, 1, 1]),
         ("transposed 4x4 s2, [2, 4, 4, 4] -> 4", (2, 4, 4, 4), (4, 4, 4, 4), [2, 2],
          [1, 1, 1, 1])]


def _call(name, x_shape, w_shape, stride, padding):
    """A function computing the case's input gradient (or transposed convolution)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    if name.startswith("transposed"):
        return lambda: nn_conv._transpose_kernel(np, x, w, stride, padding, [0, 0], [1, 1], 1)
    g_shape = nn_conv._conv2d_kernel(np, x, w, stride, padding, [1, 1], 1).shape
    g = rng.standard_normal(g_shape).astype(np.float32)
    return lambda: nn_conv._grad_input_kernel(np, g, w, x, stride, padding, [1, 1], 1)


def _best_ms(fn, repeat: int, calls: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(calls):
            fn()
        times.append((time.process_time() - start) / calls)
    return min(times) * 1e3


def measure(cases, repeat: int) -> list:
    """[(case name, NumPy ms, C ms)]."""
    installed = dict(nn_conv.NATIVE_KERNELS)
    rows = []
    try:
        for case in cases:
            fn = _call(*case)
            c_out = fn()  # (compiles the C kernel)
            nn_conv.NATIVE_KERNELS.clear()
            np.testing.assert_allclose(c_out, fn(), rtol=1e-4, atol=1e-4 * np.abs(c_out).max())
            best = {"C": [], "NumPy": []}
            for _ in range(2):
                nn_conv.NATIVE_KERNELS.update(installed)
                best["C"].append(_best_ms(fn, repeat))
                nn_conv.NATIVE_KERNELS.clear()
                best["NumPy"].append(_best_ms(fn, repeat))
            rows.append((case[0], min(best["NumPy"]), min(best["C"])))
    finally:
        nn_conv.NATIVE_KERNELS.update(installed)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small shapes, one round")
    args = parser.parse_args(argv)
    rows = measure(QUICK if args.quick else CASES, 1 if args.quick else args.repeat)
    print("| case | NumPy GEMM + col2im, ms | C, ms | C / NumPy |")
    print("|---|---:|---:|---:|")
    for name, numpy_ms, c_ms in rows:
        print(f"| {name} | {numpy_ms:.3f} | {c_ms:.3f} | {c_ms / numpy_ms:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
