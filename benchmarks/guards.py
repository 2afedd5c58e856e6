"""The cost of guards on the call path: a converted Layer whose forward reads 0, 5 or 50
Python attributes (each one a guard checked on every call), in µs per call.

    python benchmarks/guards.py [--repeat 7] [--number 2000]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import d2s  # noqa: E402
import runtime as rt  # noqa: E402


def _module(counts):
    lines = ["import runtime as rt", ""]
    for n in counts:
        lines += [f"class Reads{n}(rt.nn.Layer):", "    def __init__(self):",
                  "        super().__init__()"]
        lines += [f"        self.a{i} = {i}" for i in range(n)]
        total = " + ".join(f"self.a{i}" for i in range(n)) or "0"
        lines += ["    def forward(self, x):", f"        return x + ({total})", ""]
    folder = tempfile.mkdtemp(prefix="d2s_bench_guards_")
    path = os.path.join(folder, "guard_layers.py")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location("guard_layers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=2000)
    args = ap.parse_args(argv)
    counts = (0, 5, 50)
    module = _module(counts)
    x = rt.ones([4])
    rows = []
    for n in counts:
        layer = d2s.to_static(getattr(module, f"Reads{n}")())
        with rt.no_grad():
            assert float(layer(x).numpy()[0]) == 1 + sum(range(n))
        guards = len(layer.forward.program_cache.last_entry.guards)
        rows.append((n, guards, layer))
    best = [float("inf")] * len(rows)
    with rt.no_grad():
        for _ in range(args.repeat):
            for i, (_, _, layer) in enumerate(rows):
                t = timeit.timeit(lambda layer=layer: layer(x), number=args.number)
                best[i] = min(best[i], t / args.number * 1e6)
    print("| converted Layer call, forward reads N attributes | guards | µs per call "
          "| × 0 guards |")
    print("|---|---:|---:|---:|")
    for (n, guards, _), us in zip(rows, best):
        print(f"| N = {n} | {guards} | {us:.2f} | {us / best[0]:.2f} |")


if __name__ == "__main__":
    main()
