"""Per-op overhead of eager `runtime` against plain NumPy.

A chain of 100 elementwise ops (add, mul, tanh in turn) on a [4, 16] float32 tensor: the
arrays are tiny, so the time is almost all dispatch overhead. Run as

    python benchmarks/eager_overhead.py [--repeat 7] [--number 200] [--device gpu]

and it prints a Markdown table of µs per op (best of `repeat` runs of `number` chains each)
and the ratio to NumPy. Times are CPU time of this process (`time.process_time`), so other
load on a shared machine does not inflate them. Recording on means the input has stop_gradient=False, so every op
records a tape node; recording off runs the same chain under `rt.no_grad()`. With
`--device gpu` the runtime rows run on CuPy, each chain ends with a device sync (so queued
kernels are timed too), and the NumPy row stays on the host as the baseline. Where PyTorch is
installed, the same chain in PyTorch eager (grad on and off) is measured in the same run.
"""
from __future__ import annotations

import argparse
import time
import timeit

import numpy as np

import runtime as rt

N_OPS = 100
SHAPE = (4, 16)


def chain(x, b, w, tanh):
    """The timed chain: + and * dispatch on x's type, `tanh` is NumPy's or the runtime's."""
    for i in range(N_OPS):
        k = i % 3
        if k == 0:
            x = x + b
        elif k == 1:
            x = x * w
        else:
            x = tanh(x)
    return x


def numpy_chain(x, b, w):
    return chain(x, b, w, np.tanh)


def eager_chain(x, b, w):
    return chain(x, b, w, rt.tanh)


def synced(fn):
    """On the GPU, `fn` then a device sync, so kernels still queued are inside the timing."""
    xp = rt.backend.XP
    if xp is np:
        return fn
    device = xp.cuda.Device()
    return lambda: (fn(), device.synchronize())


def best_us_per_op(fn, repeat: int, number: int) -> float:
    fn = synced(fn)
    fn()  # warm up
    runs = timeit.repeat(fn, repeat=repeat, number=number, timer=time.process_time)
    return min(runs) / number / N_OPS * 1e6


def measure(repeat: int = 7, number: int = 200) -> list:
    rng = np.random.default_rng(0)
    xa, ba, wa = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3))
    b, w = rt.to_tensor(ba), rt.to_tensor(wa)
    x_rec = rt.to_tensor(xa, stop_gradient=False)
    x_const = rt.to_tensor(xa)

    def no_grad():
        with rt.no_grad():
            return eager_chain(x_rec, b, w)

    np.testing.assert_allclose(eager_chain(x_rec, b, w).numpy(), numpy_chain(xa, ba, wa),
                               rtol=1e-5)
    rows = [
        ("plain NumPy", best_us_per_op(lambda: numpy_chain(xa, ba, wa), repeat, number)),
        ("eager, recording on (stop_gradient=False)",
         best_us_per_op(lambda: eager_chain(x_rec, b, w), repeat, number)),
        ("eager, recording off (rt.no_grad)", best_us_per_op(no_grad, repeat, number)),
        ("eager, no input needs grad", best_us_per_op(
            lambda: eager_chain(x_const, b, w), repeat, number)),
    ]
    return rows + torch_rows(xa, ba, wa, repeat, number)


def torch_rows(xa, ba, wa, repeat: int, number: int) -> list:
    """The same chain in PyTorch eager, a peer, when it is installed (CPU, one thread)."""
    try:
        import torch
    except ImportError:
        return []
    torch.set_num_threads(1)
    x_rec = torch.tensor(xa, requires_grad=True)
    b, w = torch.tensor(ba), torch.tensor(wa)

    def no_grad():
        with torch.no_grad():
            return chain(x_rec, b, w, torch.tanh)

    return [
        (f"PyTorch {torch.__version__} eager, grad on",
         best_us_per_op(lambda: chain(x_rec, b, w, torch.tanh), repeat, number)),
        (f"PyTorch {torch.__version__} eager, no_grad", best_us_per_op(no_grad, repeat, number)),
    ]


def table(rows) -> str:
    base = rows[0][1]
    lines = ["| mode | µs per op | ratio to NumPy |", "|---|---:|---:|"]
    lines += [f"| {name} | {us:.2f} | {us / base:.2f}x |" for name, us in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--device", default="cpu", help="cpu, or gpu (needs CuPy and a GPU)")
    args = parser.parse_args()
    device = rt.set_device(args.device)
    print(f"{N_OPS}-op chain (add, mul, tanh) on float32{list(SHAPE)}, "
          f"best of {args.repeat} x {args.number} chains, runtime on {device}\n")
    print(table(measure(args.repeat, args.number)))


if __name__ == "__main__":
    main()
