"""First call of a huge converted function: time and memory by phase (issue 35, "Size limits").

    python benchmarks/huge_function.py [--lines 10000] [--repeat 5] [--profile out.prof]
    python benchmarks/huge_function.py --first-run [--repeat 4]   # build + first run alone

The function is what a big unrolled model or generated code looks like: blocks of tensor
arithmetic and layer-like calls, with a tensor `if` (some with an `elif`), a Python `for` over
a small range and a list grown and summed every few blocks. Each repeat runs in a fresh
subprocess (nothing cached, memory from a clean start) and reports, per phase, the time spent
in that phase alone (CPU seconds: the machine may be shared; phases nested in it not
counted) and the growth of resident memory:

    parse      source -> AST (d2s/pyct/parser.py)
    survey     the analyses before the passes (names, node types, outside reads)
    passes     the converters (d2s/converters), each with its analyses (d2s/pyct)
    compile    hoisting, unparsing and compiling the generated code (d2s/pyct/loader.py)
    trace      running the converted function into a program
    build      compiling the program for the executor
    run        the rest of the call: running the program, wrapping the result

Target (issue 35): 10,000 lines convert, trace, build and run their first call in <= 0.5 s and
<= 50 MB. `--profile FILE` writes a cProfile of one first call (`python -m pstats FILE`).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PHASES = ("parse", "survey", "passes", "compile", "trace", "build", "run")


def huge_source(lines: int) -> str:
    """The source of `def huge(x, w, b)` of about `lines` lines (x: [4, 8], w: [8, 8], b: [8])."""
    out = ["def huge(x, w, b):", "    h = x", "    total = rt.zeros([4, 8])"]
    block = 0
    while len(out) < lines - 1:
        k = block % 5
        out += [
            f"    # block {block}",
            "    h = rt.matmul(h, w) + b",
            f"    h = rt.nn.functional.relu(h) * {1.0 + k * 0.01:.2f}",
            f"    s{k} = h.sum(axis=-1, keepdim=True)",
            f"    h = h / (s{k}.abs() + 1.0)",
        ]
        if block % 3 == 0:
            out += [
                f"    if h.mean() > {0.1 * k:.1f}:",
                "        h = h * 0.5 + total * 0.25",
                f"    elif h.max() > {0.2 * k:.1f}:",
                "        h = h - 0.1",
                "    else:",
                "        h = rt.tanh(h)",
            ]
        elif block % 3 == 1:
            out += [
                "    parts = []",
                "    for i in range(3):",
                "        parts.append(h * (i + 1))",
                "    h = (parts[0] + parts[1] + parts[2]) / 6.0",
            ]
        else:
            out += [
                "    total = total + h",
                f"    if total.sum() < {block}.0:",
                "        total = total * 0.9",
            ]
        block += 1
    out.append("    return h + total")
    return "\n".join(out) + "\n"


def make_function(lines: int):
    """`huge`, compiled from a file-less source registered with `linecache` (where `inspect`
    finds it, as it finds d2s's own generated code)."""
    import linecache

    import runtime as rt
    src = huge_source(lines)
    filename = f"<d2s-bench-huge-{lines}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope: dict = {"rt": rt}
    exec(compile(src, filename, "exec"), scope)  # noqa: S102  (source generated above)
    return scope["huge"]


class _Phases:
    """Seconds and resident-memory growth per phase, each phase's own (what runs inside a
    nested phase counts for that one)."""

    def __init__(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.rss = dict.fromkeys(PHASES, 0)
        self._stack: list = []

    def wrap(self, owner, attr: str, phase: str) -> None:
        inner = getattr(owner, attr)
        phases = self

        def timed(*args, **kwargs):
            phases._enter(phase)
            try:
                return inner(*args, **kwargs)
            finally:
                phases._leave()

        setattr(owner, attr, timed)

    def _enter(self, phase):
        now, rss = time.process_time(), _rss()
        if self._stack:
            self._charge(self._stack[-1], now, rss)
        self._stack.append([phase, now, rss])

    def _leave(self):
        now, rss = time.process_time(), _rss()
        self._charge(self._stack.pop(), now, rss)
        if self._stack:
            self._stack[-1][1:] = [now, rss]

    def _charge(self, frame, now, rss):
        phase, start, start_rss = frame
        self.seconds[phase] += now - start
        self.rss[phase] += rss - start_rss
        frame[1:] = [now, rss]


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _instrument() -> _Phases:
    import runtime as rt
    from d2s import running, tracing, transpile
    from d2s.pyct import analysis, loader, parser, reads
    phases = _Phases()
    phases.wrap(parser, "parse_function", "parse")
    phases.wrap(transpile, "_prepare", "survey")
    phases.wrap(reads, "outside_reads", "survey")
    phases.wrap(transpile, "_run_passes", "passes")
    phases.wrap(analysis, "analyze", "passes")
    phases.wrap(transpile, "_finalize", "compile")
    phases.wrap(loader, "write", "compile")  # (printing; `compile_written` compiles the text)
    phases.wrap(loader, "compile_written", "compile")
    phases.wrap(tracing, "_trace", "trace")
    phases.wrap(rt.static.Executor, "compiled", "build")
    del running
    return phases


def _one_first_call(lines: int, profile: str | None) -> dict:
    """In this (fresh) process: the first call of a `lines`-line function, by phase."""
    import numpy as np

    import d2s
    import runtime as rt
    fn = make_function(lines)
    rng = np.random.default_rng(0)
    x = rt.to_tensor(rng.standard_normal([4, 8]).astype("float32"))
    w = rt.to_tensor((rng.standard_normal([8, 8]) * 0.3).astype("float32"))
    b = rt.to_tensor(rng.standard_normal([8]).astype("float32"))
    expected = fn(x, w, b).numpy()  # eager, before anything is instrumented
    static = d2s.to_static(fn)
    phases = _instrument()
    base_rss, base_peak = _rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if profile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    start, cpu = time.perf_counter(), time.process_time()
    phases._enter("run")
    got = static(x, w, b)
    phases._leave()
    wall, total = time.perf_counter() - start, time.process_time() - cpu
    if profile:
        prof.disable()
        prof.dump_stats(profile)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4, atol=1e-5)
    return {"total": total, "wall": wall, "seconds": phases.seconds, "rss": phases.rss,
            "rss_growth": _rss() - base_rss, "peak_growth": max(0, peak - base_peak)}


def compiled_against_interpreted(lines: int, repeat: int) -> dict:
    """Thread CPU s of the program's build and first run, compiled and interpreted
    (`runtime/program/interpreter.py`), alternating in this process on one traced program."""
    import gc

    import numpy as np

    import d2s
    import runtime as rt
    fn = make_function(lines)
    rng = np.random.default_rng(0)
    args = [rt.to_tensor(rng.standard_normal(s).astype("float32")) for s in ([4, 8], [8, 8], [8])]
    static = d2s.to_static(fn)
    static(*args)
    entry = static.program_cache.last_entry
    program, fetch = entry.concrete.main_program, entry.compiled.ready().fetch
    feed = dict(zip(entry.feed_names, [a._data for a in args]))
    expected = entry.compiled.fn(feed)
    times: dict = {"compiled": [], "interpreted": []}
    for _ in range(repeat):
        for how, seconds in times.items():
            program._compiled.clear()
            gc.collect()
            start = time.thread_time()
            got = rt.static.Executor().compiled(
                program, fetch, interpret_first=how == "interpreted").fn(feed)
            seconds.append(time.thread_time() - start)
            assert len(got) == len(expected)
            assert all(np.array_equal(a, b) for a, b in zip(got, expected))
    return times


def _fresh_runs(lines: int, repeat: int) -> list:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, __file__, "--child", "--lines", str(lines)],
                             env=env, check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.splitlines()[-1]))
    return runs


def report(runs: list, lines: int) -> None:
    med = statistics.median
    mb = 1 / 2**20
    print(f"first call of a {lines}-line function, median of {len(runs)} fresh processes:")
    print(f"  {'phase':8s} {'CPU s':>9s} {'RSS MB':>8s}")
    for p in PHASES:
        print(f"  {p:8s} {med(r['seconds'][p] for r in runs):9.3f}"
              f" {med(r['rss'][p] for r in runs) * mb:8.1f}")
    print(f"  {'total':8s} {med(r['total'] for r in runs):9.3f}"
          f" {med(r['rss_growth'] for r in runs) * mb:8.1f}"
          f"   (wall {med(r['wall'] for r in runs):.3f} s,"
          f" peak RSS growth {med(r['peak_growth'] for r in runs) * mb:.1f} MB)")
    print("  target: <= 0.5 s and <= 50 MB (issue 35)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", default=None, help="write a cProfile of one first call here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--first-run", action="store_true",
                    help="time the program's build and first run alone, compiled against "
                         "interpreted (one process)")
    args = ap.parse_args(argv)
    if args.first_run:
        sys.path.insert(0, ROOT)
        for how, seconds in compiled_against_interpreted(args.lines, args.repeat).items():
            print(f"{how:12s} CPU s: " + ", ".join(f"{t:.3f}" for t in seconds))
        return 0
    if args.child or args.profile:
        sys.path.insert(0, ROOT)
        result = _one_first_call(args.lines, args.profile)
        if args.child:
            print(json.dumps(result))
        else:
            report([result], args.lines)
        return 0
    report(_fresh_runs(args.lines, args.repeat), args.lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
