"""Where the time of a converted call goes: the MLP 784-256-256-10 at batch 1 (inference) and
one whole training step (forward, `loss.backward()`, `opt.step()`, `opt.clear_grad()` in one
`@d2s.to_static` function) of a zoo model, split by what the compiled program calls.

    python benchmarks/profile_step.py [--model "BERT classifier (T=16)"] [--optimizer Adam]
                                      [--calls 200]

`--model` is a zoo model of benchmarks/models.py, "ResNet basic block" or "Transformer encoder
layer" (issue 37's blocks).

The compiled program's functions are its globals (`runtime/program/codegen.py`); each one
the program calls is replaced, for the profiled calls only, by a wrapper that adds its time
to its name (`np.matmul`, a kernel, a fused chain). What the wrappers do not cover is the
program's own Python (assignments, `del`, branches) and the call path around it
(`d2s/fast_call.py`, the result's Tensor). The wrappers' own cost (measured on a function
doing nothing, per call) is subtracted. All times are CPU time of this thread (other load on a
shared machine does not count); the un-profiled call time is measured first, alternately with
plain NumPy for the MLP.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from collections import defaultdict

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from call_path import MLP, _entry
from models import Case, cases
from train_step import _make_opt, _whole_step

import d2s
import runtime as rt
from examples.models.resnet import BasicBlock


def _name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc):
        return f"np.{fn.__name__}"
    if module.startswith("numpy"):
        return f"np.{name}"
    code = getattr(fn, "__code__", None)
    if name.endswith("<lambda>") and code is not None:  # where it is defined
        return f"lambda at {os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    return name.replace("<locals>.", "")


def profile(call, program_globals: dict, calls: int):
    """(ms per call unprofiled, {name: [calls per call, ms per call]}, ms per call profiled
    minus the wrappers' cost) for `call()`, whose compiled program has `program_globals`."""
    for _ in range(3):
        call()
    start = time.thread_time()
    for _ in range(calls):
        call()
    plain = (time.thread_time() - start) / calls * 1e3
    spent: dict = defaultdict(lambda: [0, 0.0])
    clock = time.thread_time  # CPU time: load from other processes does not count
    originals = {}

    def wrapped(fn, name):
        cell = spent[name]

        def timed(*args, **kwargs):
            t = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                cell[1] += clock() - t
                cell[0] += 1
        return timed

    for key, value in list(program_globals.items()):
        if callable(value) and not isinstance(value, type) and not key.startswith("_") and \
                key not in ("xp", "asarray"):
            originals[key] = value
            program_globals[key] = wrapped(value, _name(value))
    try:
        nothing = wrapped(lambda: None, "(calibration)")
        t = clock()
        for _ in range(20000):
            nothing()
        overhead = (clock() - t) / 20000
        spent.pop("(calibration)")
        start = time.thread_time()
        for _ in range(calls):
            call()
        profiled = (time.thread_time() - start) / calls * 1e3
    finally:
        program_globals.update(originals)
    wrappers = sum(c for c, _ in spent.values()) / calls * overhead * 1e3
    table = {k: [c / calls, (s / calls) * 1e3 - c / calls * overhead * 1e3]
             for k, (c, s) in spent.items()}
    return plain, table, profiled - wrappers


def report(title: str, plain: float, table: dict, profiled: float, top: int,
           extra: list | None = None) -> None:
    print(f"\n{title}\n")
    print("| what | calls per call | ms per call | share |\n|---|---:|---:|---:|")
    rows = sorted(table.items(), key=lambda kv: -kv[1][1])
    ops = sum(ms for _, ms in table.values())
    for name, (n, ms) in rows[:top]:
        print(f"| {name} | {n:g} | {ms:.4f} | {ms / profiled:.1%} |")
    rest = sum(ms for _, (_, ms) in rows[top:])
    if rest:
        print(f"| {len(rows) - top} other functions | | {rest:.4f} | {rest / profiled:.1%} |")
    other = profiled - ops
    print(f"| the program's own Python and the call path | | {other:.4f} | "
          f"{other / profiled:.1%} |")
    print(f"| **total** (profiled, wrappers' cost subtracted) | | {profiled:.4f} | 100% |")
    print(f"| total, not profiled | | {plain:.4f} | |")
    for line in extra or ():
        print(line)


def mlp_profile(calls: int) -> None:
    rt.seed(0)
    layer = d2s.to_static(MLP())
    x = rt.to_tensor(np.random.default_rng(0).standard_normal((1, 784)).astype("float32"))
    ws = [(fc.weight.numpy(), fc.bias.numpy()) for fc in (layer.fc1, layer.fc2, layer.fc3)]

    def numpy_mlp(a):
        h = np.maximum(a @ ws[0][0] + ws[0][1], 0)
        h = np.maximum(h @ ws[1][0] + ws[1][1], 0)
        return h @ ws[2][0] + ws[2][1]

    no_grad = rt.no_grad()

    def call():
        with no_grad:
            return layer(x)

    call()
    entry = _entry(layer)
    xa = x.numpy()
    for _ in range(3):
        numpy_mlp(xa)
    start = time.thread_time()
    for _ in range(calls * 3):
        numpy_mlp(xa)
    numpy_ms = (time.thread_time() - start) / (calls * 3) * 1e3
    plain, table, profiled = profile(call, entry.compiled.ready().body.__globals__, calls * 3)
    report("MLP 784-256-256-10, batch 1, `to_static` Layer under `no_grad`", plain, table,
           profiled, 8, [f"| plain NumPy, same run | | {numpy_ms:.4f} | |"])


def block_case() -> Case:
    """Issue 37's ResNet basic block (two 3x3 convs 16 -> 16 with BatchNorm) on
    [16, 16, 32, 32], its loss the output's mean."""
    x = rt.to_tensor(np.random.default_rng(1).standard_normal((16, 16, 32, 32)).astype(
        "float32"))
    return Case("ResNet basic block", lambda: BasicBlock(16, 16), (x,), rt.zeros([1]),
                lambda out, _labels: out.mean())


def encoder_layer_case() -> Case:
    """Issue 37's Transformer encoder layer (d=256, 4 heads, FFN 1024, no dropout) on
    [16, 64, 256], its loss the output's mean."""
    x = rt.to_tensor(np.random.default_rng(1).standard_normal((16, 64, 256)).astype(
        "float32"))
    return Case("Transformer encoder layer",
                lambda: rt.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0), (x,),
                rt.zeros([1]), lambda out, _labels: out.mean())


def step_profile(name: str, opt_name: str, calls: int) -> None:
    case = next(c for c in cases() + [block_case(), encoder_layer_case()] if c.name == name)
    rt.seed(0)
    model = copy.deepcopy(case.make())
    model.train()
    step = _whole_step(model, case.loss, _make_opt(opt_name, model), len(case.inputs))
    args = (*case.inputs, case.labels)
    step(*args)
    entry = _entry(step)
    plain, table, profiled = profile(lambda: step(*args), entry.compiled.ready().body.__globals__,
                                     calls)
    report(f"{name}: one whole training step ({opt_name}), batch {case.batch}", plain,
           table, profiled, 14)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="BERT classifier (T=16)")
    ap.add_argument("--optimizer", default="Adam")
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args(argv)
    mlp_profile(args.calls)
    step_profile(args.model, args.optimizer, max(1, args.calls // 10))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
