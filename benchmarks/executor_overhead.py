"""Static executor overhead against plain NumPy and eager `runtime`.

Two workloads, each timed as plain NumPy vs eager (`rt.no_grad`) vs the static executor
(`Executor.run` with a feed dict and a fetch list, so the per-run cost is included):

- the 100-op chain of `benchmarks/eager_overhead.py` (add, mul, tanh on a [4, 16] float32
  tensor), reported in µs per op;
- an MLP 784-256-256-10 (ReLU) inference at batch 1 and 64, reported in µs per call.

    python benchmarks/executor_overhead.py [--repeat 15] [--number 200] [--device gpu]

prints a Markdown table with the ratio of each row to plain NumPy. With `--device gpu` the
eager and static rows run on CuPy (each call ends with a device sync; static runs include
uploading the feed and fetching to the host); plain NumPy stays on the host. Where PyTorch is
installed, the MLP is also timed as PyTorch eager and TorchScript (`torch.jit.trace`), peers
measured in the same interleaved rounds.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import timeit

# One BLAS thread: on a shared 2-core machine a multi-threaded GEMM makes the matmul timings
# swing by 10x between runs; every row uses the same BLAS, so the ratios stay fair.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from eager_overhead import N_OPS, SHAPE, eager_chain, numpy_chain, synced

import runtime as rt
from runtime import static


def best_us(fns: list, repeat: int, number: int) -> list:
    """Best-of-`repeat` µs per call of each function, measured in interleaved rounds so that
    load from other processes hits every row alike."""
    fns = [synced(fn) for fn in fns]
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timeit.timeit(fn, number=number) / number * 1e6)
    return best


def chain_rows(repeat, number):
    rng = np.random.default_rng(0)
    xa, ba, wa = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3))
    b, w = rt.to_tensor(ba), rt.to_tensor(wa)
    x = rt.to_tensor(xa)
    main = static.Program()
    with static.program_guard(main):
        xv = static.data("x", list(SHAPE), "float32")
        out = eager_chain(xv, b, w)
    exe = static.Executor()
    feed = {"x": xa}
    fetch = [out]
    np.testing.assert_allclose(exe.run(main, feed, fetch)[0], numpy_chain(xa, ba, wa), rtol=1e-5)

    def eager():
        with rt.no_grad():
            return eager_chain(x, b, w)

    times = best_us([lambda: numpy_chain(xa, ba, wa), eager, lambda: exe.run(main, feed, fetch)],
                    repeat, number)
    names = ["plain NumPy", "eager (no_grad)", "static executor"]
    return [(f"chain, µs per op: {n}", t / N_OPS) for n, t in zip(names, times)]


def mlp_rows(batch, repeat, number):
    rng = np.random.default_rng(1)
    sizes = [784, 256, 256, 10]
    ws = [(rng.standard_normal((a, c)) / np.sqrt(a)).astype(np.float32)
          for a, c in itertools.pairwise(sizes)]
    bs = [np.zeros(c, np.float32) for c in sizes[1:]]
    xa = rng.standard_normal((batch, 784)).astype(np.float32)

    def numpy_mlp(x):
        for i, (w, b) in enumerate(zip(ws, bs)):
            x = x @ w + b
            if i < 2:
                x = np.maximum(x, 0)
        return x

    tw = [rt.Parameter(w, name=f"bench.w{i}") for i, w in enumerate(ws)]
    tb = [rt.Parameter(b, name=f"bench.b{i}") for i, b in enumerate(bs)]

    def rt_mlp(x):
        for i, (w, b) in enumerate(zip(tw, tb)):
            x = rt.matmul(x, w) + b
            if i < 2:
                x = rt.nn.functional.relu(x)
        return x

    main = static.Program()
    with static.program_guard(main):
        out = rt_mlp(static.data("x", [None, 784], "float32"))
    exe = static.Executor()
    feed, fetch = {"x": xa}, [out]
    np.testing.assert_allclose(exe.run(main, feed, fetch)[0], numpy_mlp(xa), rtol=1e-4,
                               atol=1e-5)
    xt = rt.to_tensor(xa)

    def eager():
        with rt.no_grad():
            return rt_mlp(xt)

    fns = [lambda: numpy_mlp(xa), eager, lambda: exe.run(main, feed, fetch)]
    names = ["plain NumPy", "eager (no_grad)", "static executor"]
    for name, fn in torch_mlps(ws, bs, xa, numpy_mlp(xa)):
        fns.append(fn)
        names.append(name)
    times = best_us(fns, repeat, number)
    return [(f"MLP 784-256-256-10 batch {batch}, µs per call: {n}", t)
            for n, t in zip(names, times)]


def torch_mlps(ws, bs, xa, expected) -> list:
    """(name, call) for the MLP in PyTorch eager and TorchScript, when PyTorch is installed."""
    try:
        import torch
    except ImportError:
        return []
    torch.set_num_threads(1)
    tw = [torch.tensor(w) for w in ws]
    tb = [torch.tensor(b) for b in bs]

    def mlp(x):
        for i, (w, b) in enumerate(zip(tw, tb)):
            x = x @ w + b
            if i < 2:
                x = torch.relu(x)
        return x

    x = torch.tensor(xa)
    with torch.no_grad():
        scripted = torch.jit.trace(mlp, x)
        np.testing.assert_allclose(scripted(x).numpy(), expected, rtol=1e-4, atol=1e-5)

    def eager():
        with torch.no_grad():
            return mlp(x)

    def script():
        with torch.no_grad():
            return scripted(x)

    return [(f"PyTorch {torch.__version__} eager", eager), ("TorchScript (jit.trace)", script)]


def table(groups) -> str:
    lines = ["| workload | µs | × plain NumPy |", "|---|---:|---:|"]
    for rows in groups:
        base = rows[0][1]
        for name, us in rows:
            lines.append(f"| {name} | {us:.2f} | {us / base:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=200)
    ap.add_argument("--device", default="cpu", help="cpu, or gpu (needs CuPy and a GPU)")
    args = ap.parse_args(argv)
    rt.set_device(args.device)
    groups = [chain_rows(args.repeat, args.number),
              mlp_rows(1, args.repeat, args.number),
              mlp_rows(64, args.repeat, max(args.number // 10, 1))]
    print(table(groups))


if __name__ == "__main__":
    main()
