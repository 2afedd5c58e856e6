"""The cost of the guard that the Parameters frozen when a program was traced still are: a
converted Layer with a frozen backbone of N Parameters (N/2 `Linear(2, 2)`) and a trainable
head, its steady call under `no_grad` (CPU time, µs per call), with the guard reading every
flag on each call (as before `runtime.parameter.FLAGS_VERSION`) and as it is now, alternating
in one process; and the guard's check alone.

    python benchmarks/frozen_guard.py [--sizes 200,2000] [--rounds 5] [--number 200]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import d2s
import runtime as rt
from d2s.operators import tensor_flags


class Net(rt.nn.Layer):
    def __init__(self, n_params: int):
        super().__init__()
        self.backbone = rt.nn.LayerList([rt.nn.Linear(2, 2) for _ in range(n_params // 2)])
        self.head = rt.nn.Linear(2, 1)

    def forward(self, x):
        for layer in self.backbone:
            x = layer(x)
        return self.head(x)


def _every_flag(self) -> bool:
    return all(p.stop_gradient for p in self.params)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200,2000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--number", type=int, default=200)
    args = ap.parse_args(argv)
    now = tensor_flags.FrozenParameters.all_frozen
    ways = {"every flag per call": property(_every_flag), "version counted": now}
    print("| frozen Parameters | guard | µs per call (best) | median | guard alone µs |")
    print("|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        net = Net(n)
        for p in net.backbone.parameters():
            p.stop_gradient = True
        static = d2s.to_static(net)
        x = rt.to_tensor(np.ones((1, 2), "float32"))

        def timed(static=static, x=x):
            with rt.no_grad():
                for _ in range(10):
                    static(x)
                start = time.process_time()
                for _ in range(args.number):
                    static(x)
            return (time.process_time() - start) / args.number * 1e6
        times = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, prop in ways.items():
                tensor_flags.FrozenParameters.all_frozen = prop
                times[name].append(timed())
        tensor_flags.FrozenParameters.all_frozen = now
        guard = tensor_flags.FrozenParameters(tuple(net.backbone.parameters()))
        alone = {"every flag per call": lambda guard=guard: _every_flag(guard),
                 "version counted": lambda guard=guard: guard.all_frozen}
        for name, ts in times.items():
            check = min(timeit.repeat(alone[name], number=500, repeat=5)) / 500 * 1e6
            print(f"| {n} | {name} | {min(ts):.1f} | {sorted(ts)[len(ts) // 2]:.1f} | "
                  f"{check:.3f} |")


if __name__ == "__main__":
    main()
