"""Training steps and inference of the model zoo and two blocks, d2s against PyTorch: the table
of `d2s bench --models`.

    python benchmarks/model_table.py [--torch-python /tmp/torchvenv/bin/python] [--threads 1,2]
                                     [--only 'ResNet basic block,LeNet'] [--compile all] [--quick]

Rows: each case of `model_table_cases.py` (the zoo of `examples/models`, the ResNet basic
block of issue 37 on [16, 16, 32, 32] and a Transformer encoder layer d=256, 4 heads, FFN
1024 on [16, 64, 256]) as a training step (forward, loss, `backward`, SGD `step`,
`clear_grad`) and as inference at batch 1 and 32 (eval mode, no grad). Columns, in
milliseconds per call:

- d2s eager; `to_static`: the model converted (`d2s.to_static(model)`), the loop eager;
  whole step: the step function converted, backward and the optimizer inside one program;
- PyTorch eager and `torch.compile` (the model compiled; by default for the two blocks only,
  as compiling costs 10 s or more per shape: `--compile all`), from `torch_twins.py` run by
  the interpreter given as `--torch-python` (a separate environment: torch is no dependency
  of d2s); without it those columns are "-";
- ratios of the best d2s column (converted or whole step) to PyTorch eager and to
  `torch.compile` (below 1: d2s is faster).

Each thread count runs in fresh processes, one per side, with the BLAS/OpenMP and d2s thread
variables set (and `torch.set_num_threads`); d2s compiles its generated C at the first call
(`D2S_NATIVE=sync` unless set), so the table is the steady state. A cell is the best of `--repeat` rounds; on one thread the
clock is process CPU time, so load from other processes on a shared machine does not inflate
it; on more threads it is wall-clock time. A model that does not convert shows the error's
class in its cell instead of a time.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import model_table_cases as spec

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS = ("ResNet basic block", "Transformer encoder layer")
COLUMNS = ("eager", "to_static", "whole_step", "torch", "torch_compile")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "D2S_NUM_THREADS")


# ---- the d2s side (a worker process per thread count) ---------------------------------------

def d2s_models(quick: bool) -> dict:
    """{case name: a function making the d2s model}."""
    import runtime as rt
    from examples import models as zoo
    from examples.models.resnet import BasicBlock

    channels = 4 if quick else 16
    d_model, heads, ffn = (16, 2, 32) if quick else (256, 4, 1024)
    return {
        "ResNet basic block": lambda: BasicBlock(channels, channels),
        "Transformer encoder layer": lambda: rt.nn.TransformerEncoderLayer(
            d_model, heads, ffn, dropout=0.0),
        "LeNet 28x28": lambda: zoo.LeNet(image_size=28),
        "ResNet (2 stages x 2 blocks)": zoo.ResNet,
        "MobileNet (width 0.5)": zoo.MobileNet,
        "LSTM LM (T=20)": zoo.LSTMLanguageModel,
        "Seq2Seq teacher forcing": zoo.Seq2Seq,
        "BERT classifier (T=16)": zoo.BertClassifier,
        "DeepFM": zoo.DeepFM,
        "Speech Conv1D+GRU (T=40)": zoo.SpeechClassifier,
    }


def d2s_loss(kind: str, out, labels):
    import runtime as rt

    if kind == "mean":
        return out.mean()
    if kind == "bce":
        return rt.nn.functional.binary_cross_entropy_with_logits(out, labels)
    logits = out[0] if kind == "ce_first" else out
    return rt.nn.functional.cross_entropy(rt.reshape(logits, [-1, logits.shape[-1]]),
                                          rt.reshape(labels, [-1]))


def d2s_calls(case: dict, model, task: str, inputs, labels) -> dict:
    """{column: call} for one task of one case; each column has its own copy of `model`."""
    import d2s
    import runtime as rt

    def train_step(layer, forward):
        opt = rt.optimizer.SGD(0.001, parameters=layer.parameters())

        def step():
            loss = d2s_loss(case["loss"], forward(*inputs), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step

    eager, static, whole = (copy.deepcopy(model) for _ in range(3))
    if task == "infer":
        for layer in (eager, static):
            layer.eval()
        converted = d2s.to_static(static)

        def inference(forward):
            def call():
                with rt.no_grad():
                    return forward(*inputs)
            return call
        return {"eager": inference(eager), "to_static": inference(converted)}
    return {"eager": train_step(eager, eager), "to_static": train_step(static, d2s.to_static(
        static)), "whole_step": d2s.to_static(train_step(whole, whole))}


def run_d2s(args) -> None:
    import runtime as rt

    makers = d2s_models(args.quick)
    for case in selected(args.only):
        for task, batch in spec.tasks(case, args.quick):
            arrays, labels = spec.make_arrays(case, batch, args.quick)
            inputs = [rt.to_tensor(a) for a in arrays]
            labels = None if labels is None else rt.to_tensor(labels)
            rt.seed(0)
            row = {"name": case["name"], "task": task, "batch": batch}
            for column, call in d2s_calls(case, makers[case["name"]](), task, inputs,
                                          labels).items():
                try:
                    row[column] = spec.best_ms(call, args.repeat, args.target,
                                               spec.clock_for(args.threads))
                except (TypeError, ValueError, RuntimeError, NotImplementedError) as err:
                    # a model d2s cannot convert is reported in the table, not hidden
                    row[column] = f"fails: {type(err).__name__}"
            spec.emit(row)


# ---- the orchestrator -------------------------------------------------------------------------

def selected(only: str) -> list[dict]:
    prefixes = [s.strip() for s in only.split(",") if s.strip()]
    return [c for c in spec.CASES
            if not prefixes or any(c["name"].startswith(p) for p in prefixes)]


def _worker_rows(cmd: list[str], threads: int) -> list[dict]:
    env = dict(os.environ, **{var: str(threads) for var in THREAD_VARS})
    # steady state: d2s's generated C (fused runs, convolutions) compiled at the first call
    env.setdefault("D2S_NATIVE", "sync")
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=False)
    rows = [json.loads(line[4:]) for line in done.stdout.splitlines() if line.startswith("ROW ")]
    if done.returncode != 0:
        print(f"model_table: {os.path.basename(cmd[1])} exited with status {done.returncode}",
              file=sys.stderr)
    return rows


def worker_args(args, threads: int) -> list[str]:
    out = ["--threads", str(threads), "--repeat", str(args.repeat), "--target",
           str(args.target), "--only", args.only]
    return out + ["--compile", args.compile] + (["--quick"] if args.quick else [])


def measure(args, threads: int) -> dict:
    """{(name, task, batch): {column: ms or 'fails: ...'}} of both sides at `threads`."""
    runs = [[sys.executable, os.path.abspath(__file__), "--worker"]]
    if args.torch_python:
        runs.append([args.torch_python, os.path.join(HERE, "torch_twins.py")])
    cells: dict = {}
    for cmd in runs:
        for row in _worker_rows(cmd + worker_args(args, threads), threads):
            key = (row.pop("name"), row.pop("task"), row.pop("batch"))
            cells.setdefault(key, {}).update(row)
    return cells


def _ms(value) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) else f"{value:.2f}"


def _ratio(d2s_cells: list, peer) -> str:
    times = [v for v in d2s_cells if isinstance(v, float)]
    if not times or not isinstance(peer, float):
        return "-"
    return f"{min(times) / peer:.2f}x"


def table(cells: dict, args) -> str:
    """The Markdown table of one thread count, one line per (case, task) in case order."""
    header = ("| model | step | batch | d2s eager | to_static | whole step | torch eager "
              "| torch.compile | best d2s / torch eager | best d2s / torch.compile |")
    lines = [header, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in selected(args.only):
        for task, batch in spec.tasks(case, args.quick):
            row = cells.get((case["name"], task, batch), {})
            best = [row.get("to_static"), row.get("whole_step")]
            values = [_ms(row.get(c)) for c in COLUMNS]
            values += [_ratio(best, row.get("torch")), _ratio(best, row.get("torch_compile"))]
            lines.append(f"| {case['name']} | {task} | {batch} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--torch-python", metavar="PATH",
                        help="an interpreter with torch installed, for the PyTorch columns")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--only", default="", help="comma-separated case name prefixes")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.2,
                        help="seconds per timed round (sets the number of calls)")
    parser.add_argument("--compile", default=",".join(BLOCKS), metavar="PREFIXES",
                        help="cases timed under torch.compile too, comma-separated name "
                             "prefixes, 'all' or 'none' (compiling costs 10 s or more per "
                             "shape; default: the two blocks)")
    parser.add_argument("--quick", action="store_true",
                        help="small shapes and one short round: a smoke run")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.target = 1, 0.001
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.worker:
        args.threads = int(args.threads)
        run_d2s(args)
        return 0
    for threads in (int(t) for t in args.threads.split(",")):
        cells = measure(args, threads)
        clock = "process CPU time" if threads == 1 else "wall-clock time"
        print(f"\n### {threads} thread{'s' if threads > 1 else ''}: ms per call (best of "
              f"{args.repeat} rounds, {clock})\n")
        print(table(cells, args), flush=True)
    if not args.torch_python:
        print("\n(no --torch-python: the PyTorch columns are empty)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
