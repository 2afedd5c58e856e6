"""Tensor loops: `for i in range(n)` with a tensor `n` against the same loop written as a
tensor `while`, eager code and plain NumPy, in µs per iteration.

    python benchmarks/loops.py [--repeat 7] [--number 20] [--steps 100]

Each row runs a loop of `--steps` iterations whose body adds 1 to a [4] float32 tensor;
the rows are timed in interleaved rounds (best of `--repeat`) and printed as a Markdown table
with the ratio of each to plain NumPy.
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

import d2s  # noqa: E402
import runtime as rt  # noqa: E402


def for_range(x, n):
    for _ in range(n):
        x = x + 1
    return x


def while_loop(x, n):
    i = rt.zeros([1], "int64")
    while i < n:
        x = x + 1
        i += 1
    return x


def numpy_loop(x, n):
    for _ in range(n):
        x = x + 1
    return x


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args(argv)
    xa = np.ones(4, np.float32)
    x = rt.to_tensor(xa)
    n = rt.to_tensor([args.steps], dtype="int64")
    static_for, static_while = d2s.to_static(for_range), d2s.to_static(while_loop)
    expected = xa + args.steps
    for f in (static_for, static_while):
        np.testing.assert_allclose(f(x, n).numpy(), expected)

    def eager_while():
        with rt.no_grad():
            return while_loop(x, n)

    rows = [("plain NumPy, Python `for`", lambda: numpy_loop(xa, args.steps)),
            ("eager, tensor `while` (no_grad)", eager_while),
            ("to_static, `for i in range(n)` (n a tensor)", lambda: static_for(x, n)),
            ("to_static, tensor `while`", lambda: static_while(x, n))]
    best = [float("inf")] * len(rows)
    for _ in range(args.repeat):
        for i, (_, fn) in enumerate(rows):
            t = timeit.timeit(fn, number=args.number) / args.number / args.steps * 1e6
            best[i] = min(best[i], t)
    print(f"| {args.steps}-iteration loop, body `x = x + 1` on f32[4] | µs per iteration "
          "| × plain NumPy |")
    print("|---|---:|---:|")
    for (name, _), us in zip(rows, best):
        print(f"| {name} | {us:.2f} | {us / best[0]:.2f} |")


if __name__ == "__main__":
    main()
