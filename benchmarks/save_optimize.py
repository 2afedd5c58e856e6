"""Inference of saved conv zoo models with BatchNorm folded (`d2s.save`, the default) vs saved
as traced (`optimize=False`), side by side in one run, at batch 1 and 32.

Each model is loaded with `d2s.load` as traced, folded with fusion off (`D2S_FUSION=0`: its
`conv2d -> add -> relu` tails as separate ops) and folded with fusion on (the default: the
tails fused although the batch is unknown when the program is built), checked equal (rtol
1e-5) on the timed input, then timed in interleaved rounds (best of `--repeat`); the ratios
are folded / as traced and fused / unfused. Times are
the process's CPU time (all its threads; one BLAS thread), so other load on a shared machine
does not skew the ratio as it skews wall time.

    python benchmarks/save_optimize.py [--repeat 15] [--number 20] [--threads 1]
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
from runtime.program import native_build, threads

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
    """Best-of-`repeat` CPU µs per call of each function, in interleaved rounds (after the
    C code of the fused runs, built in the background, is ready: what users get)."""
    for fn in fns:
        fn()
    native_build.wait(60)
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
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the fused runs (CPU time counts them all)")
    args = ap.parse_args(argv)
    threads.set_num_threads(args.threads)
    folder = tempfile.mkdtemp(prefix="d2s-save-optimize-")
    print("| model | batch | as traced µs | folded, unfused µs | folded µs | folded / as traced "
          "| fused / unfused | ops (traced → folded) |\n|---|---:|---:|---:|---:|---:|---:|---|")
    for i, (name, make, shape) in enumerate(MODELS):
        rt.seed(0)
        layer = _with_statistics(make(), shape)
        spec = [d2s.InputSpec(shape, "float32")]
        loaded = {}
        for optimize in (False, True):
            prefix = os.path.join(folder, f"model{i}.{optimize}")
            d2s.save(layer, prefix, input_spec=spec, optimize=optimize)
            loaded[optimize] = d2s.load(prefix)
        os.environ["D2S_FUSION"] = "0"  # (read when the loaded program is compiled)
        loaded["unfused"] = d2s.load(os.path.join(folder, f"model{i}.True"))
        del os.environ["D2S_FUSION"]
        ops = " → ".join(str(loaded[o].program().num_ops()) for o in (False, True))
        for batch in BATCHES:
            x = rt.to_tensor(np.random.default_rng(batch).standard_normal(
                [batch] + shape[1:]).astype(np.float32))
            for o in (True, "unfused"):
                np.testing.assert_allclose(loaded[o](x).numpy(), loaded[False](x).numpy(),
                                           rtol=1e-5, atol=1e-5, err_msg=name)
            traced, unfused, folded = best_cpu_us(
                [lambda m=loaded[o], x=x: m(x) for o in (False, "unfused", True)],
                args.repeat, args.number)
            print(f"| {name} | {batch} | {traced:.0f} | {unfused:.0f} | {folded:.0f} "
                  f"| {folded / traced:.2f} | {folded / unfused:.2f} | {ops} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
