"""Tensor loops: `for i in range(n)` with a tensor `n` against the same loop written as a
tensor `while`, eager code and plain NumPy, in µs per iteration; then a small control-flow
function (a tensor `if`, then a 10-step tensor `while` or `for range(n)`) per call, on f32[4]
and f32[4, 16]; then a 10-step loop whose body calls a small matmul ([4, 16] x [16, 16]).

    python benchmarks/loops.py [--repeat 9] [--number 20] [--steps 100]

Each loop row runs a loop of `--steps` iterations whose body adds 1 to a [4] float32 tensor.
All rows are timed in interleaved rounds (best of `--repeat`, CPU time, so that load from
other processes counts less) and printed as Markdown tables with the ratio of each row to
plain NumPy.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from runtime.program import native_build  # noqa: E402


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


def gate_while(x):
    """A tensor `if`, then a 10-step tensor `while`."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    i = rt.zeros([1], "int64")
    while i < 10:
        y = y + 1.0
        i += 1
    return y


def gate_for(x, n):
    """A tensor `if`, then `for range(n)` with a tensor `n` (10)."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    for _ in range(n):
        y = y + 1.0
    return y


def numpy_gate(x, n=10):
    y = x * 2.0 if x.mean() > 0 else -x
    for _ in range(n):
        y = y + 1.0
    return y


def matmul_while(y, w):
    """A 10-step tensor `while` whose body calls a small matmul."""
    i = rt.zeros([1], "int64")
    while i < 10:
        y = rt.matmul(y, w) + 1.0
        i += 1
    return y


def numpy_matmul_loop(y, w):
    for _ in range(10):
        y = y @ w + np.float32(1.0)
    return y


def best_us(fns: list, repeat: int, number: int) -> list:
    """Best-of-`repeat` CPU µs per call of each function, in interleaved rounds."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = timeit.Timer(fn, timer=time.process_time)
            best[i] = min(best[i], t.timeit(number=number) / number * 1e6)
    return best


def _times(fn, k: int):
    def run():
        for _ in range(k):
            fn()
    return run


def table(title: str, unit: str, rows: list, times: list) -> str:
    """Markdown rows, each with its ratio to the last "plain NumPy" row above it."""
    lines = [f"| {title} | {unit} | × plain NumPy |", "|---|---:|---:|"]
    base = times[0]
    for (name, _), us in zip(rows, times, strict=True):
        base = us if name.startswith("plain NumPy") else base
        lines.append(f"| {name} | {us:.2f} | {us / base:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
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

    loop_rows = [("plain NumPy, Python `for`", lambda: numpy_loop(xa, args.steps)),
                 ("eager, tensor `while` (no_grad)", eager_while),
                 ("to_static, `for i in range(n)` (n a tensor)", lambda: static_for(x, n)),
                 ("to_static, tensor `while`", lambda: static_while(x, n))]

    ga = np.array([0.5, -0.25, 1.0, 2.0], np.float32)
    g, n10 = rt.to_tensor(ga), rt.to_tensor([10], dtype="int64")
    wide_a = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    wide = rt.to_tensor(wide_a)
    sg_while, sg_for = d2s.to_static(gate_while), d2s.to_static(gate_for)
    for a in (ga, -ga, wide_a, -wide_a):  # both branches of the one program, two shapes
        np.testing.assert_allclose(sg_while(rt.to_tensor(a)).numpy(), numpy_gate(a))
        np.testing.assert_allclose(sg_for(rt.to_tensor(a), n10).numpy(), numpy_gate(a))
    sg_wide = d2s.to_static(gate_while)  # (its own program: one shape per row)
    sg_wide(wide)
    wa = (np.random.default_rng(1).standard_normal((16, 16)) * 0.2).astype(np.float32)
    w = rt.to_tensor(wa)
    sg_matmul = d2s.to_static(matmul_while)
    np.testing.assert_allclose(sg_matmul(wide, w).numpy(), numpy_matmul_loop(wide_a, wa),
                               rtol=1e-5, atol=1e-5)

    def eager_gate():
        with rt.no_grad():
            return gate_while(g)

    gate_rows = [("plain NumPy (Python `if` and `for`)", lambda: numpy_gate(ga)),
                 ("eager, tensor `if` + `while` (no_grad)", eager_gate),
                 ("to_static, tensor `if` + 10-step tensor `while`", lambda: sg_while(g)),
                 ("to_static, tensor `if` + `for range(n)`, n = 10 a tensor",
                  lambda: sg_for(g, n10)),
                 ("plain NumPy, f32[4, 16]", lambda: numpy_gate(wide_a)),
                 ("to_static, tensor `if` + 10-step tensor `while`, f32[4, 16]",
                  lambda: sg_wide(wide)),
                 ("plain NumPy, 10 steps of `y = y @ w + 1` ([4, 16] x [16, 16])",
                  lambda: numpy_matmul_loop(wide_a, wa)),
                 ("to_static, the same as a tensor `while`", lambda: sg_matmul(wide, w))]
    native_build.wait(60)  # (loops in C built in the background: time what users get)
    # (one timing of a loop row runs `number` loops; of a function row, ten times as many
    # calls, so that both take about as long)
    times = best_us([f for _, f in loop_rows] + [_times(f, 10) for _, f in gate_rows],
                    args.repeat, args.number)
    times[len(loop_rows):] = [t / 10 for t in times[len(loop_rows):]]
    per_iteration = [t / args.steps for t in times[:len(loop_rows)]]
    print(table(f"{args.steps}-iteration loop, body `x = x + 1` on f32[4]",
                "µs per iteration", loop_rows, per_iteration))
    print()
    print(table("control-flow function on f32[4]", "µs per call", gate_rows,
                times[len(loop_rows):]))


if __name__ == "__main__":
    main()
