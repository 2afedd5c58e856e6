"""Cost of `d2s.to_static`: first call (convert + trace + build + compile + run) and steady
per-call time, static vs eager, over the end-to-end corpus (tests/d2s/corpus).

    python benchmarks/conversion.py [--repeat N] [--category if] [--worst 10]

Targets (issue 4): median first call <= 5 ms; median steady call faster than the eager call.
Cases listed in the corpus's known_failures.STATIC are skipped (they do not convert yet).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "d2s")]

import numpy as np

import d2s
import runtime as rt

from corpus import (  # noqa: F401  isort: skip
    cases_if, cases_while, cases_for, cases_break_continue, cases_return, cases_logical,
    cases_assert_print_len_cast, cases_list_dict, cases_calls, cases_misc, cases_layers)
from corpus import known_failures
from corpus.registry import CASES


def _inputs(value):
    if isinstance(value, np.ndarray):
        return rt.to_tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_inputs(v) for v in value)
    if isinstance(value, dict):
        return {k: _inputs(v) for k, v in value.items()}
    return value


def _per_call(fn, args, repeat: int) -> float:
    """Median seconds per call over `repeat` rounds of a few calls each."""
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(5):
            fn(*args)
        rounds.append((time.perf_counter() - start) / 5)
    return statistics.median(rounds)


def measure(case, repeat: int):
    if case.is_layer:
        rt.seed(0)
        eager = case.fn()
        eager.eval()
        rt.seed(0)
        layer = case.fn()
        layer.eval()
        static = d2s.to_static(layer)
    else:
        eager = case.fn
        static = d2s.to_static(case.fn)
    args = _inputs(case.args[0])
    with contextlib.redirect_stdout(io.StringIO()):
        start, cpu = time.perf_counter(), time.thread_time()
        static(*args)
        first = time.perf_counter() - start
        first_cpu = time.thread_time() - cpu
        t_static = _per_call(static, args, repeat)
        t_eager = _per_call(eager, args, repeat)
    return first, t_static, t_eager, first_cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--category", default=None)
    ap.add_argument("--worst", type=int, default=8, help="show the N slowest first calls")
    args = ap.parse_args(argv)
    rt.set_device("cpu")
    rows, failed = [], []
    for case in CASES:
        if case.name in known_failures.STATIC or (args.category and case.category !=
                                                   args.category):
            continue
        try:
            rows.append((case, *measure(case, args.repeat)))
        except Exception as e:  # noqa: BLE001  (reported, not hidden)
            failed.append((case.name, f"{type(e).__name__}: {e}"[:100]))
    if not rows:
        print("no cases measured")
        return 1
    firsts = [r[1] * 1e3 for r in rows]
    first_cpus = [r[4] * 1e3 for r in rows]
    statics = [r[2] * 1e6 for r in rows]
    eagers = [r[3] * 1e6 for r in rows]
    ratios = [s / e for s, e in zip(statics, eagers)]
    print(f"d2s.to_static over {len(rows)} corpus cases (NumPy CPU, median of {args.repeat})")
    print(f"  first call (convert+trace+build+run): median {statistics.median(firsts):7.2f} ms"
          f"   p90 {np.percentile(firsts, 90):7.2f} ms   (target <= 5 ms)")
    print(f"  first call, CPU time of this thread:  median {statistics.median(first_cpus):7.2f} ms"
          "   (what the wall time is on an idle machine)")
    print(f"  steady call, static:                  median {statistics.median(statics):7.1f} us")
    print(f"  steady call, eager:                   median {statistics.median(eagers):7.1f} us")
    print(f"  static / eager per call:              median {statistics.median(ratios):7.2f}x"
          f"   (target < 1; faster on {sum(r < 1 for r in ratios)}/{len(ratios)} cases)")
    by_cat: dict = {}
    for case, first, st, ea, _ in rows:
        by_cat.setdefault(case.category, []).append((first * 1e3, st / ea))
    print("  by category (median first ms, median static/eager):")
    for cat, vals in sorted(by_cat.items()):
        print(f"    {cat:24s} n={len(vals):3d}  first {statistics.median(v[0] for v in vals):6.2f}"
              f"  ratio {statistics.median(v[1] for v in vals):5.2f}")
    print("  slowest first calls:")
    for case, first, st, ea, _ in sorted(rows, key=lambda r: -r[1])[:args.worst]:
        print(f"    {case.name:48s} {first * 1e3:7.2f} ms   static {st * 1e6:7.1f} us"
              f"   eager {ea * 1e6:7.1f} us")
    for name, err in failed:
        print(f"  FAILED {name}: {err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
