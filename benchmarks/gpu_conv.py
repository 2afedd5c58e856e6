"""Convolutions on the GPU: cuDNN (`runtime/ops/conv_cudnn.py`) against the im2col + GEMM path
(`D2S_CUDNN=0`), forward and forward + backward, on the ResNet basic block's convolution
([16, 16, 32, 32] * [16, 16, 3, 3], padding 1) and a strided and a depthwise one; values of
the two paths compared in the same run.

    python benchmarks/gpu_conv.py [--device gpu] [--repeat 5] [--number 20]

`--device cpu` runs the script on NumPy (both columns are then the CPU path: it shows the
script works, which is what its test checks); a Markdown table goes to stdout.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import runtime as rt  # noqa: E402
import runtime.nn.functional as F  # noqa: E402
from runtime import backend  # noqa: E402
from runtime.ops import conv_cudnn  # noqa: E402

CASES = [  # (name, x shape, w shape, conv2d keywords)
    ("ResNet block 3x3, 16->16, [16, 16, 32, 32]", (16, 16, 32, 32), (16, 16, 3, 3),
     {"padding": 1}),
    ("3x3 stride 2, 32->64, [16, 32, 32, 32]", (16, 32, 32, 32), (64, 32, 3, 3),
     {"padding": 1, "stride": 2}),
    ("depthwise 3x3, 64 channels, [16, 64, 16, 16]", (16, 64, 16, 16), (64, 1, 3, 3),
     {"padding": 1, "groups": 64}),
]


def _sync() -> None:
    if backend.XP is not np:
        backend.XP.cuda.Device().synchronize()


def _step(x, w, kwargs, backward: bool):
    def run():
        y = F.conv2d(x, w, **kwargs)
        if backward:
            y.sum().backward()
            x.clear_grad()
            w.clear_grad()
        _sync()
        return y
    return run


def _best_ms(fn, repeat: int, number: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t) / number * 1e3)
    return best


def _value(x, w, kwargs):
    return F.conv2d(x, w, **kwargs).numpy()


def _with_cudnn(on: bool, fn, *args):
    """fn(*args) with cuDNN allowed (`on`) or not."""
    saved = os.environ.get("D2S_CUDNN")
    os.environ["D2S_CUDNN"] = "1" if on else "0"
    try:
        return fn(*args)
    finally:
        if saved is None:
            del os.environ["D2S_CUDNN"]
        else:
            os.environ["D2S_CUDNN"] = saved


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="gpu" if rt.is_compiled_with_cuda() else "cpu")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--number", type=int, default=20)
    args = ap.parse_args(argv)
    rt.set_device(args.device)
    print(f"device {args.device}; cuDNN: "
          f"{'yes' if conv_cudnn.cudnn_of(backend.XP) is not None else 'no'}")
    print("| convolution | pass | cuDNN ms | GEMM path ms | GEMM / cuDNN | max rel. diff |")
    print("|---|---|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for name, xs, ws, kwargs in CASES:
        x = rt.to_tensor(rng.standard_normal(xs).astype("float32"))
        w = rt.to_tensor((rng.standard_normal(ws) * 0.1).astype("float32"))
        x.stop_gradient = w.stop_gradient = False
        ys = [_with_cudnn(on, _value, x, w, kwargs) for on in (True, False)]
        diff = float(np.max(np.abs(ys[0] - ys[1])) / (np.max(np.abs(ys[1])) + 1e-30))
        for backward in (False, True):
            ms = [_with_cudnn(on, _best_ms, _step(x, w, kwargs, backward), args.repeat,
                              args.number) for on in (True, False)]
            print(f"| {name} | {'fwd + bwd' if backward else 'fwd'} | {ms[0]:.3f} | "
                  f"{ms[1]:.3f} | {ms[1] / ms[0]:.2f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
