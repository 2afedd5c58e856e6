"""One training step on every model of the zoo (`examples/models`): eager, `forward` converted
(the loop's backward/step/clear_grad stay eager), and the whole step converted
(`loss.backward()`, `opt.step()`, `opt.clear_grad()` inside the `@d2s.to_static` function, so
forward, backward and the optimizer update are one program).

    python benchmarks/train_step.py [--repeat 5] [--target 0.2] [--only LeNet,ResNet]
                                    [--optimizer SGD|Momentum|Adam|AdamW]

The three copies of each model start from the same parameters; the three step functions are
timed alternately, `repeat` rounds of `number` calls each (CPU time of this process, best
round), with the models and inputs of `benchmarks/models.py`. BLAS is limited to
`--blas-threads` threads (default 1) when threadpoolctl is installed. After timing, the
parameters of the three copies are compared (they took the same number of steps from the same
start): a whole-step program that trained differently from eager would show here. It prints a
Markdown table of milliseconds per step and the speedups over eager.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from models import cases, with_blas_threads  # noqa: E402  (benchmarks/models.py: the zoo's models and inputs)


def _whole_step(model, loss_fn, opt, n_inputs: int):
    """The whole step as one converted function of the model's inputs and the labels."""
    if n_inputs == 1:
        def step(a, labels):
            loss = loss_fn(model(a), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
    elif n_inputs == 2:
        def step(a, b, labels):
            loss = loss_fn(model(a, b), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
    else:
        def step(a, b, c, labels):
            loss = loss_fn(model(a, b, c), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
    return d2s.to_static(step)


def _make_opt(name: str, model):
    cls = getattr(rt.optimizer, name)
    return cls(learning_rate=0.001, parameters=model.parameters())


def _steps(case, model, opt_name: str):
    """(eager step, forward-converted step, whole-step converted) on three copies."""
    models = [copy.deepcopy(model) for _ in range(3)]
    fns = []
    eager_m, fwd_m, whole_m = models
    fwd = d2s.to_static(fwd_m).forward
    for m, forward in ((eager_m, eager_m), (fwd_m, fwd)):
        opt = _make_opt(opt_name, m)

        def step(m=m, forward=forward, opt=opt):
            m.train()
            loss = case.loss(forward(*case.inputs), case.labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        fns.append(step)
    whole_m.train()
    whole = _whole_step(whole_m, case.loss, _make_opt(opt_name, whole_m), len(case.inputs))
    fns.append(lambda: whole(*case.inputs, case.labels))
    return fns, models


def measure(case, repeat: int, target: float, opt_name: str) -> dict:
    rt.seed(0)
    fns, models = _steps(case, case.make(), opt_name)
    row = {"name": case.name, "batch": case.batch}
    try:
        for fn in fns:  # warm up: the converted ones trace and compile here
            fn()
        start = time.process_time()
        fns[0]()
        elapsed = time.process_time() - start
        fns[1](), fns[2]()  # (every copy takes the same number of steps)
        number = max(1, int(target / max(elapsed, 1e-4)))
        best = [float("inf")] * 3
        for _ in range(repeat):
            for i, fn in enumerate(fns):
                t = timeit.timeit(fn, number=number, timer=time.process_time)
                best[i] = min(best[i], t / number * 1e3)
        row["ms"] = best
        ref = [p.numpy() for p in models[0].parameters()]
        row["max_diff"] = [max(float(np.max(np.abs(a - p.numpy()))) if a.size else 0.0
                               for a, p in zip(ref, m.parameters())) for m in models[1:]]
    except (TypeError, ValueError, RuntimeError, NotImplementedError) as err:
        row["ms"] = f"{type(err).__name__}: {str(err).splitlines()[0][:120]}"
    return row


def table(rows: list[dict]) -> str:
    lines = ["| model | batch | eager ms | forward converted ms | whole step converted ms "
             "| forward speedup | whole-step speedup | max param diff vs eager (forward, whole) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if isinstance(r["ms"], str):
            lines.append(f"| {r['name']} | {r['batch']} | fails: {r['ms']} | | | | | |")
            continue
        e, f, w = r["ms"]
        lines.append(f"| {r['name']} | {r['batch']} | {e:.2f} | {f:.2f} | {w:.2f} | "
                     f"{e / f:.2f}x | {e / w:.2f}x | {r['max_diff'][0]:.1e}, {r['max_diff'][1]:.1e} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.2,
                        help="CPU seconds per timed round (sets the number of calls)")
    parser.add_argument("--only", default="", help="comma-separated name prefixes")
    parser.add_argument("--optimizer", default="SGD", choices=["SGD", "Momentum", "Adam",
                                                                "AdamW"])
    parser.add_argument("--blas-threads", type=int, default=1)
    return with_blas_threads(run, parser.parse_args(argv))


def run(args) -> int:
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    rows = []
    for case in cases():
        if case.loss is None or only and not any(case.name.startswith(p) for p in only):
            continue
        rows.append(measure(case, args.repeat, args.target, args.optimizer))
        print(f"measured {case.name}", flush=True)
    print(f"\nOne training step ({args.optimizer}), device {rt.get_device()}, CPU ms per step "
          f"(best of {args.repeat} rounds, BLAS threads {args.blas_threads})\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
