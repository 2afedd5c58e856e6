"""The ResNet basic block's converted training step with BatchNorm + ReLU fused into one op
(`runtime/program/passes/batch_norm_relu.py`) and without, in one process, alternately.

    python benchmarks/bn_relu_step.py [--steps 20] [--builds 3]

The block is `examples/models/resnet.py`'s BasicBlock (two 3x3 convs 16 -> 16 with
BatchNorm, identity shortcut) on [16, 16, 32, 32] float32; a step is the converted forward,
the mean as the loss, `backward`, SGD `step` and `clear_grad`, on one thread. "unfused" is
the same code with the selection replaced by the identity (what `D2S_FUSION=0` does to it,
leaving the other fusion on). Reported per side: the median and best CPU time of `--steps`
steps (`time.process_time`), and the first call (convert, trace, compile, one step) of each of
`--builds` fresh conversions, wall/CPU ms. The losses of both sides are compared first.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import d2s
import runtime as rt
from d2s import running
from examples.models.resnet import BasicBlock
from runtime.program import threads

_FUSE = (running.fuse_batch_norm_relu, running.fuse_batch_norm_relu_in_place)


def _select(fused: bool) -> None:
    if fused:
        running.fuse_batch_norm_relu, running.fuse_batch_norm_relu_in_place = _FUSE
    else:
        running.fuse_batch_norm_relu = lambda program, keep=(): program
        running.fuse_batch_norm_relu_in_place = lambda program, keep=(): 0


def _converted_step(fused: bool, x):
    """(a training step of a fresh converted block, the first call's (wall, CPU) seconds,
    its loss)."""
    _select(fused)
    rt.seed(0)
    block = BasicBlock(16, 16)
    static = d2s.to_static(block)
    opt = rt.optimizer.SGD(learning_rate=0.01, parameters=block.parameters())

    def step() -> float:
        loss = static(x).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return float(loss)

    t0, c0 = time.perf_counter(), time.process_time()
    loss = step()
    return step, (time.perf_counter() - t0, time.process_time() - c0), loss


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--builds", type=int, default=3)
    args = ap.parse_args(argv)
    threads.set_num_threads(1)
    x = rt.to_tensor(np.random.default_rng(0).standard_normal((16, 16, 32, 32))
                     .astype("float32"))
    steps, firsts, losses = {}, {True: [], False: []}, {}
    for _ in range(args.builds):
        for fused in (False, True):
            step, first, loss = _converted_step(fused, x)
            steps.setdefault(fused, step)
            firsts[fused].append(first)
            losses.setdefault(fused, loss)
    _select(True)
    assert abs(losses[True] - losses[False]) <= 1e-5 * max(1.0, abs(losses[False])), losses
    times = {True: [], False: []}
    for _ in range(args.steps):
        for fused in (False, True):
            c0 = time.process_time()
            steps[fused]()
            times[fused].append(time.process_time() - c0)
    print("| BasicBlock step, CPU ms | median | best | first call, wall/CPU ms |")
    print("|---|---:|---:|---|")
    for fused in (False, True):
        first = ", ".join(f"{w * 1e3:.0f}/{c * 1e3:.0f}" for w, c in firsts[fused])
        print(f"| {'fused' if fused else 'unfused'} | "
              f"{statistics.median(times[fused]) * 1e3:.2f} | {min(times[fused]) * 1e3:.2f} | "
              f"{first} |")


if __name__ == "__main__":
    main()
