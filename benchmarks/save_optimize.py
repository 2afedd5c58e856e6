"""Inference of saved conv zoo models with BatchNorm folded (`d2s.save`, the default) vs saved
as traced (`optimize=False`), side by side in one run, at batch 1 and 32.

Each pair is loaded with `d2s.load`, checked equal (rtol 1e-5) on the timed input, then
timed in interleaved rounds (best of `--repeat`); the ratio is folded / as traced. Times are
the process's CPU time (all its threads; one BLAS thread), so other load on a shared machine
does not skew the ratio as it skews wall time.

    python benchmarks/save_optimize.py [--repeat 15] [--number 20]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import timeit

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, as the other benchmarks

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import d2s
import runtime as rt
from examples.models import MobileNet, ResNet

# (name, make the Layer, input shape with None for the batch)
MODELS = [
    ("ResNet (2 stages x 2 blocks)", ResNet, [None, 3, 32, 32]),
    ("MobileNet (width 0.5)", MobileNet, [None, 3, 32, 32]),
]
BATCHES = (1, 32)


def _with_statistics(layer, shape: list):
    """`layer` after a few training-mode calls (running statistics away from 0 and 1), in
    eval mode."""
    rng = np.random.default_rng(1)
    with rt.no_grad():
        for _ in range(3):
            layer(rt.to_tensor(rng.standard_normal([8] + shape[1:]).astype(np.float32)))
    return layer.eval()


def best_cpu_us(fns: list, repeat: int, number: int) -> list:
    """Best-of-`repeat` CPU µs per call of each function, in interleaved rounds."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            cpu = timeit.timeit(fn, number=number, timer=time.process_time)
            best[i] = min(best[i], cpu / number * 1e6)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=20)
    args = ap.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="d2s-save-optimize-")
    print("| model | batch | as traced µs | folded µs | folded / as traced | ops (traced → "
          "folded) |\n|---|---:|---:|---:|---:|---|")
    for i, (name, make, shape) in enumerate(MODELS):
        rt.seed(0)
        layer = _with_statistics(make(), shape)
        spec = [d2s.InputSpec(shape, "float32")]
        loaded = {}
        for optimize in (False, True):
            prefix = os.path.join(folder, f"model{i}.{optimize}")
            d2s.save(layer, prefix, input_spec=spec, optimize=optimize)
            loaded[optimize] = d2s.load(prefix)
        ops = " → ".join(str(loaded[o].program().num_ops()) for o in (False, True))
        for batch in BATCHES:
            x = rt.to_tensor(np.random.default_rng(batch).standard_normal(
                [batch] + shape[1:]).astype(np.float32))
            np.testing.assert_allclose(loaded[True](x).numpy(), loaded[False](x).numpy(),
                                       rtol=1e-5, atol=1e-5, err_msg=name)
            traced, folded = best_cpu_us([lambda m=loaded[o], x=x: m(x) for o in (False, True)],
                                         args.repeat, args.number)
            print(f"| {name} | {batch} | {traced:.0f} | {folded:.0f} | {folded / traced:.2f} "
                  f"| {ops} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
