"""Cost of `d2s.to_static`: first call (convert + trace + build + compile + run) and steady
per-call time, static vs eager, over the end-to-end corpus (tests/d2s/corpus).

    python benchmarks/conversion.py [--repeat N] [--category if] [--worst 10] [--no-peers]
    python benchmarks/conversion.py --sizes 500,1000,2000,4000   # first call vs function size

Targets: median first call <= 3 ms (issue 17; issue 4 asked for 5 ms); median steady call
faster than the eager call. Each first call is measured `--firsts` times (conversion caches
cleared, a new `to_static` each time) and the case counts with its median: one first call per
case moves the overall median by ±15% between runs on this machine.
Cases listed in the corpus's known_failures.STATIC are skipped (they do not convert yet).

Peer: where PaddlePaddle is installed (`pip install paddlepaddle`), each function case is
also run through `paddle.jit.to_static(full_graph=True)` (its AST mode) with the case's `rt`
global bound to `paddle` (d2s follows Paddle's API names), and the first calls of both are
compared over the cases Paddle runs eagerly and converts.
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
from d2s import transpile

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


def _fresh(case):
    """A new converted callable for `case`, with nothing converted yet: every function it
    calls is converted again on its first call, as in a new process."""
    transpile._CACHE.clear()
    transpile._CACHE_ERRORS.clear()
    if case.is_layer:
        rt.seed(0)
        layer = case.fn()
        layer.eval()
        return d2s.to_static(layer)
    return d2s.to_static(case.fn)


def measure(case, repeat: int, firsts: int = 1):
    """(first call wall s, steady static s, steady eager s, first call CPU s, CPU s of the
    first of them): the first call is the median of `firsts` first calls, each converting,
    tracing and compiling anew."""
    if case.is_layer:
        rt.seed(0)
        eager = case.fn()
        eager.eval()
    else:
        eager = case.fn
    args = _inputs(case.args[0])
    walls, cpus = [], []
    with contextlib.redirect_stdout(io.StringIO()):
        eager(*args)  # as the corpus tests: a case may build shared state on its eager run
        for _ in range(firsts):
            static = _fresh(case)
            start, cpu = time.perf_counter(), time.thread_time()
            static(*args)
            walls.append(time.perf_counter() - start)
            cpus.append(time.thread_time() - cpu)
        for _ in range(3):  # the second and third calls build the signature's fast caller
            static(*args)
            eager(*args)
        t_static = _per_call(static, args, repeat)
        t_eager = _per_call(eager, args, repeat)
    return statistics.median(walls), t_static, t_eager, statistics.median(cpus), cpus[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--firsts", type=int, default=3,
                    help="first calls per case (each converts anew); the case's median counts")
    ap.add_argument("--category", default=None)
    ap.add_argument("--worst", type=int, default=8, help="show the N slowest first calls")
    ap.add_argument("--no-peers", action="store_true", help="skip Paddle even if installed")
    ap.add_argument("--sizes", default=None,
                    help="comma-separated statement counts: time the first call of generated "
                         "functions of that many statements instead of the corpus")
    args = ap.parse_args(argv)
    rt.set_device("cpu")
    if args.sizes:
        return _size_sweep([int(n) for n in args.sizes.split(",")])
    rows, failed = [], []
    for case in CASES:
        if case.name in known_failures.STATIC or (args.category and case.category !=
                                                   args.category):
            continue
        try:
            rows.append((case, *measure(case, args.repeat, args.firsts)))
        except Exception as e:  # noqa: BLE001  (reported, not hidden)
            failed.append((case.name, f"{type(e).__name__}: {e}"[:100]))
    if not rows:
        print("no cases measured")
        return 1
    firsts = [r[1] * 1e3 for r in rows]
    first_cpus = [r[4] * 1e3 for r in rows]
    single_cpus = [r[5] * 1e3 for r in rows]
    statics = [r[2] * 1e6 for r in rows]
    eagers = [r[3] * 1e6 for r in rows]
    ratios = [s / e for s, e in zip(statics, eagers)]
    print(f"d2s.to_static over {len(rows)} corpus cases (NumPy CPU; first call: median of"
          f" {args.firsts} per case; steady: median of {args.repeat} rounds)")
    print(f"  first call (convert+trace+build+run): median {statistics.median(firsts):7.2f} ms"
          f"   p90 {np.percentile(firsts, 90):7.2f} ms   (target <= 3 ms)")
    print(f"  first call, CPU time of this thread:  median {statistics.median(first_cpus):7.2f} ms"
          "   (what the wall time is on an idle machine)")
    single = statistics.median(single_cpus)
    print(f"  the same, first of each case's calls:  median {single:7.2f} ms"
          "   (one sample per case: noisier)")
    print(f"  steady call, static:                  median {statistics.median(statics):7.1f} us")
    print(f"  steady call, eager:                   median {statistics.median(eagers):7.1f} us")
    print(f"  static / eager per call:              median {statistics.median(ratios):7.2f}x"
          f"   (target < 1; faster on {sum(r < 1 for r in ratios)}/{len(ratios)} cases)")
    by_cat: dict = {}
    for case, first, st, ea, *_ in rows:
        by_cat.setdefault(case.category, []).append((first * 1e3, st / ea))
    print("  by category (median first ms, median static/eager):")
    for cat, vals in sorted(by_cat.items()):
        print(f"    {cat:24s} n={len(vals):3d}  first {statistics.median(v[0] for v in vals):6.2f}"
              f"  ratio {statistics.median(v[1] for v in vals):5.2f}")
    print("  slowest first calls:")
    for case, first, st, ea, *_ in sorted(rows, key=lambda r: -r[1])[:args.worst]:
        print(f"    {case.name:48s} {first * 1e3:7.2f} ms   static {st * 1e6:7.1f} us"
              f"   eager {ea * 1e6:7.1f} us")
    for name, err in failed:
        print(f"  FAILED {name}: {err}")
    if not args.no_peers:
        _paddle_section([r[0] for r in rows if not r[0].is_layer],
                        {r[0].name: r[1] for r in rows})
    return 0


def _sized_function(n: int):
    """A function of `n` statements: tensor arithmetic with a tensor `if` every 20 statements
    (the source is registered with `linecache`, where `inspect` finds it, as d2s's own
    generated code is)."""
    import linecache
    lines = ["def sized(x, y):"]
    for i in range(n):
        if i % 20 == 19:
            lines += ["    if y.mean() > 0:", "        y = y * 0.5", "    else:",
                      "        y = y + x"]
        else:
            lines.append(f"    y = y * 1.001 + x * {i % 7}.0")
    lines.append("    return y")
    src = "\n".join(lines) + "\n"
    filename = f"<d2s-bench-sized-{n}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope: dict = {}
    exec(compile(src, filename, "exec"), scope)  # noqa: S102  (source generated above)
    return scope["sized"]


def _size_sweep(sizes) -> int:
    """First-call CPU time against function size (issue 17 item 6: linear is the target)."""
    x = rt.to_tensor(np.ones([4], "float32"))
    print("first call (convert+trace+build+run) of a generated function, CPU time:")
    prev = None
    for n in sizes:
        fn = _sized_function(n)
        static = d2s.to_static(fn)
        start, cpu = time.perf_counter(), time.thread_time()
        static(x, x)
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
        per = cpu / n * 1e3
        grow = "" if prev is None else \
            f"   x{cpu / prev[1]:.2f} for x{n / prev[0]:.1f} statements"
        print(f"  {n:6d} statements: {cpu * 1e3:9.1f} ms CPU ({wall * 1e3:9.1f} ms wall),"
              f" {per:.3f} ms per statement{grow}")
        prev = (n, cpu)
    return 0


def _paddle_section(cases, d2s_first: dict) -> None:
    try:
        import paddle
    except ImportError:
        print("  peer: PaddlePaddle not installed (pip install paddlepaddle to compare)")
        return
    firsts = _paddle_first_calls(paddle, cases)
    if not firsts:
        print(f"  peer: Paddle {paddle.__version__} converted none of the cases")
        return
    names = sorted(firsts)
    ours = statistics.median(d2s_first[n] for n in names) * 1e3
    theirs = statistics.median(firsts[n] for n in names) * 1e3
    print(f"  peer, over the {len(names)} function cases Paddle {paddle.__version__} runs and"
          f" converts ({len(cases) - len(names)} fail in Paddle, eagerly or converted):")
    print(f"    first call, paddle.jit.to_static (AST mode): median {theirs:7.2f} ms")
    print(f"    first call, d2s.to_static:                   median {ours:7.2f} ms"
          f"   ({theirs / ours:.1f}x faster)")


def _paddle_first_calls(paddle, cases) -> dict:
    """{case name: seconds of Paddle's first converted call} for the cases it handles."""
    import logging
    import types
    import warnings
    paddle.set_device("cpu")
    logging.getLogger("paddle").setLevel(logging.ERROR)
    out = {}
    for case in cases:
        fn = case.fn
        scope = dict(fn.__globals__, rt=paddle)
        twin = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        twin.__qualname__, twin.__module__ = fn.__qualname__, fn.__module__
        try:
            call_args = _paddle_inputs(paddle, case.args[0])
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                twin(*call_args)  # the case must run eagerly in Paddle first
                static = paddle.jit.to_static(twin, full_graph=True)
                start = time.perf_counter()
                static(*call_args)
                out[case.name] = time.perf_counter() - start
        except Exception:  # noqa: BLE001, S112  (a case Paddle cannot run is left out, counted)
            continue
    return out


def _paddle_inputs(paddle, value):
    if isinstance(value, np.ndarray):
        return paddle.to_tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_paddle_inputs(paddle, v) for v in value)
    if isinstance(value, dict):
        return {k: _paddle_inputs(paddle, v) for k, v in value.items()}
    return value


if __name__ == "__main__":
    sys.exit(main())
