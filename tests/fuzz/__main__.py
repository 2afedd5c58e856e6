"""A fuzzing campaign: `python -m tests.fuzz --examples 10000 [--gen state] [--save DIR]`.

`--device fake-gpu` runs both sides on `tests/fake_cupy.py` with CUDA-graph capture on
(`D2S_CUDA_GRAPH=1`): a converted program that can be captured runs its third and later
calls as replays of its second.

Prints the counts of each outcome (see `tests.fuzz.runner`) and saves the source of every
disagreement / internal error (first ones first) so it can be shrunk into a regression test.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
import warnings

from hypothesis import HealthCheck, Phase, given, settings

from runtime.progress import ProgressBar

from . import GENERATORS, runner


def campaign(gen: str, examples: int, save: str | None, seed: int | None) -> dict:
    strategy, setup, *own = GENERATORS[gen]()
    compare = own[0] if own else runner.compare
    counts: collections.Counter = collections.Counter()
    bad: list = []
    refusals: dict = {}  # refusal_kind -> the refused outcomes
    # hypothesis may stop short of `examples`: finish() closes the bar where it stopped
    bar = ProgressBar(total=examples, prefix=f"[{gen}] example", every=max(1, examples // 10))

    def shown():
        return [("same", counts["same"]), ("disagreements", counts["disagree"]),
                ("internal errors", counts["internal"])]

    @settings(max_examples=examples, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one(case):
        source, inputs = case
        out = compare(source, inputs, setup)
        counts[out.kind] += 1
        if out.kind in ("disagree", "internal"):
            bad.append(out)
        if out.kind == "refused":
            refusals.setdefault(refusal_kind(out.detail), []).append(out)
        bar.update(sum(counts.values()), shown())

    if seed is not None:
        from hypothesis import seed as hseed
        one = hseed(seed)(one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one()
    bar.finish(sum(counts.values()), shown())
    if save and (bad or refusals):
        os.makedirs(save, exist_ok=True)
        for k, out in enumerate(bad[:50]):
            with open(os.path.join(save, f"{gen}_{k:03d}_{out.kind}.txt"), "w") as fh:
                detail = "\n".join("# " + ln for ln in out.detail.splitlines())
                fh.write(f"# inputs: {out.inputs}\n# {out.kind}:\n{detail}\n{out.source}")
        for k, (kind, outs) in enumerate(sorted(refusals.items())):
            with open(os.path.join(save, f"{gen}_refused_{k:03d}.txt"), "w") as fh:
                detail = "\n".join("# " + ln for ln in outs[0].detail.splitlines())
                fh.write(f"# inputs: {outs[0].inputs}\n# refused ({len(outs)} like it):\n"
                         f"{detail}\n{outs[0].source}")
    return {"counts": dict(counts), "bad": bad, "refusals": refusals}


def refusal_kind(detail: str) -> str:
    """A refusal's message without what varies between examples (file, line, names, numbers),
    so refusals of one kind count together."""
    first = detail.splitlines()[0] if detail else ""
    first = re.sub(r"\S+\.py:\d+", "FILE:LINE", first)
    first = re.sub(r'File "[^"]*"', "FILE", first)
    first = re.sub(r"'[^']*'", "'…'", first)
    return re.sub(r"\b\d+\b", "N", first)[:160]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz")
    p.add_argument("--examples", type=int, default=300)
    p.add_argument("--gen", default="all", choices=["all", *GENERATORS])
    p.add_argument("--save", default=None, help="directory for failing sources")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="cpu", choices=["cpu", "fake-gpu"])
    p.add_argument("--native", default=None, choices=["1", "sync", "0"],
                   help="D2S_NATIVE for the campaign; `sync` runs the generated C (fused "
                        "runs, loops) from each program's first call: each example is a new "
                        "program, so by default its exact C is still building while it runs")
    a = p.parse_args(argv)
    if a.native is not None:
        os.environ["D2S_NATIVE"] = a.native
    if a.device == "fake-gpu":
        return _on_fake_gpu(main, argv)
    gens = list(GENERATORS) if a.gen == "all" else [a.gen]
    failed = 0
    for g in gens:
        t0 = time.perf_counter()
        res = campaign(g, a.examples, a.save, a.seed)
        c = res["counts"]
        total = sum(c.values())
        print(f"[{g}] examples {total}  same {c.get('same', 0)}  "
              f"expected-same-error {c.get('same_error', 0)}  refused {c.get('refused', 0)}  "
              f"disagreements {c.get('disagree', 0)}  internal errors {c.get('internal', 0)}"
              f"  ({time.perf_counter() - t0:.0f} s)")
        for kind, outs in sorted(res["refusals"].items(), key=lambda kv: -len(kv[1])):
            print(f"  refused {len(outs)}: {kind}")
        for out in res["bad"][:3]:
            print("  first failures:", out.kind, out.detail.splitlines()[0][:300])
        failed += c.get("disagree", 0) + c.get("internal", 0)
    return 1 if failed else 0


def _on_fake_gpu(main, argv) -> int:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import fake_cupy
    os.environ["D2S_CUDA_GRAPH"] = "1"
    rest = [x for x in argv or sys.argv[1:] if x not in ("--device", "fake-gpu")]
    from runtime.program import cuda_graph
    counts = {"captures": 0, "replays": 0}
    capture, replay = cuda_graph._Graph.capture.__func__, cuda_graph._Graph.replay

    def counted_capture(cls, *args):
        graph = capture(cls, *args)
        counts["captures"] += graph is not None
        return graph

    def counted_replay(self, arrays):
        counts["replays"] += 1
        return replay(self, arrays)

    cuda_graph._Graph.capture = classmethod(counted_capture)
    cuda_graph._Graph.replay = counted_replay
    try:
        with fake_cupy.installed():
            rc = main(rest)
    finally:
        cuda_graph._Graph.capture, cuda_graph._Graph.replay = classmethod(capture), replay
    print(f"[fake-gpu] CUDA graphs captured {counts['captures']}, replayed "
          f"{counts['replays']} calls")
    return rc


if __name__ == "__main__":
    sys.exit(main())
