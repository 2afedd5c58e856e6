"""Eager vs `d2s.to_static` on every model of the zoo (`examples/models`): inference and one
training step, measured side by side in one run.

    python benchmarks/models.py [--repeat 5] [--target 0.2] [--only LeNet,ResNet]

For each model, an eager copy and a converted copy start from the same parameters. Inference
runs in eval mode under `rt.no_grad()`; a training step is forward + loss + `backward()` +
`SGD.step()` + `clear_grad()` with only `forward` converted (the loop stays eager, as in the
zoo's tests). Eager and static are timed alternately, `repeat` rounds of `number` calls each
(`number` chosen so one round takes about `target` CPU seconds), and the best round counts.
Times are CPU time of this process (`time.process_time`), so other load on a shared machine
does not inflate them; BLAS is limited to `--blas-threads` threads (default 1; needs
threadpoolctl, which comes with the `demo` extra), because the zoo's matrices are small and
idle BLAS workers spinning on a busy machine count as CPU time. It prints a Markdown table: milliseconds per call and the speedup
(eager time / static time; above 1 means the static program is faster).
"""
from __future__ import annotations

import argparse
import copy
import time
import timeit

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from examples import models as zoo  # noqa: E402


class Case:
    """A model, its inputs, a loss for training and the method to time (`forward` unless
    given, e.g. `beam_search`)."""

    def __init__(self, name: str, make, inputs, labels=None, loss=None, method: str = "forward"):
        self.name, self.make, self.inputs, self.labels = name, make, inputs, labels
        self.loss, self.method = loss, method

    @property
    def batch(self) -> int:
        return self.inputs[0].shape[0]


def _rand(*shape, seed=0):
    return rt.to_tensor(np.random.RandomState(seed).randn(*shape).astype("float32"))


def _ints(high, *shape, low=0, seed=0):
    return rt.to_tensor(np.random.RandomState(seed).randint(low, high, shape).astype("int64"))


def _ce(logits, labels):
    return rt.nn.functional.cross_entropy(rt.reshape(logits, [-1, logits.shape[-1]]),
                                          rt.reshape(labels, [-1]))


def _seq2seq_loss(out, tgt):
    return _ce(out, tgt[:, 1:])


def cases() -> list[Case]:
    lengths = rt.to_tensor(np.random.RandomState(1).randint(2, 9, 16).astype("int64"))
    frames = rt.to_tensor(np.random.RandomState(2).randint(10, 41, 8).astype("int64"))
    tokens = _ints(60, 16, 16, low=1)
    tgt = _ints(16, 16, 7, low=3)
    return [
        Case("LeNet 28x28", lambda: zoo.LeNet(image_size=28), (_rand(32, 1, 28, 28),),
             _ints(10, 32), _ce),
        Case("ResNet (2 stages x 2 blocks)", lambda: zoo.ResNet(), (_rand(16, 3, 16, 16),),
             _ints(10, 16), _ce),
        Case("MobileNet (width 0.5)", lambda: zoo.MobileNet(), (_rand(16, 3, 32, 32),),
             _ints(10, 16), _ce),
        Case("LSTM LM (T=20)", lambda: zoo.LSTMLanguageModel(), (_ints(50, 16, 20),),
             _ints(50, 16, 20), lambda out, y: _ce(out[0], y)),
        Case("Seq2Seq teacher forcing", lambda: zoo.Seq2Seq(),
             (_ints(16, 16, 8, low=3), lengths, tgt[:, :-1]), tgt, _seq2seq_loss),
        Case("Seq2Seq greedy search", lambda: zoo.Seq2Seq(), (_ints(16, 16, 8, low=3), lengths),
             method="greedy_search"),
        Case("Seq2Seq beam search (k=3)", lambda: zoo.Seq2Seq(),
             (_ints(16, 16, 8, low=3), lengths), method="beam_search"),
        Case("BERT classifier (T=16)", lambda: zoo.BertClassifier(), (tokens,), _ints(2, 16),
             _ce),
        Case("DeepFM", lambda: zoo.DeepFM(), (_ints(4, 256, 4), _rand(256, 3)),
             rt.to_tensor(np.random.RandomState(3).randint(0, 2, 256).astype("float32")),
             rt.nn.functional.binary_cross_entropy_with_logits),
        Case("Speech Conv1D+GRU (T=40)", lambda: zoo.SpeechClassifier(),
             (_rand(8, 40, 8), frames), _ints(6, 8), _ce),
    ]


def _calls(case: Case, model, static: bool):
    """(inference call, training step call) for one copy of the model."""
    fn = getattr(model, case.method)
    if static:
        fn = d2s.to_static(fn) if case.method != "forward" else d2s.to_static(model).forward
    opt = rt.optimizer.SGD(0.001, parameters=model.parameters())

    def infer():
        model.eval()
        with rt.no_grad():
            return fn(*case.inputs)

    def train():
        model.train()
        loss = case.loss(fn(*case.inputs), case.labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return infer, (train if case.loss is not None else None)


def side_by_side(eager, static, repeat: int, target: float) -> tuple[float, float]:
    """Best ms per call of each, timed in alternating rounds."""
    eager(), static()  # warm up: the static side traces and compiles here
    start = time.process_time()
    eager()
    number = max(1, int(target / max(time.process_time() - start, 1e-4)))
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, fn in enumerate((eager, static)):
            t = timeit.timeit(fn, number=number, timer=time.process_time)
            best[i] = min(best[i], t / number * 1e3)
    return best[0], best[1]


def measure(case: Case, repeat: int, target: float) -> dict:
    rt.seed(0)
    model = case.make()
    eager_infer, eager_train = _calls(case, copy.deepcopy(model), static=False)
    static_infer, static_train = _calls(case, copy.deepcopy(model), static=True)
    row = {"name": case.name, "batch": case.batch}
    for kind, e, s in (("infer", eager_infer, static_infer), ("train", eager_train,
                                                              static_train)):
        if e is None:
            row[kind] = None
            continue
        try:
            row[kind] = side_by_side(e, s, repeat, target)
        except (TypeError, ValueError, RuntimeError, NotImplementedError) as err:
            # a model d2s cannot convert yet is reported in the table, not hidden
            row[kind] = f"{type(err).__name__}"
    return row


def _cells(result) -> list[str]:
    if result is None:
        return ["-", "-", "-"]
    if isinstance(result, str):
        return ["", f"fails: {result}", ""]
    e, s = result
    return [f"{e:.2f}", f"{s:.2f}", f"{e / s:.2f}x"]


def table(rows: list[dict]) -> str:
    lines = [("| model | batch | infer eager ms | infer static ms | speedup "
              "| train step eager ms | train step static ms | speedup |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        cells = [r["name"], str(r["batch"])] + _cells(r["infer"]) + _cells(r["train"])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.2,
                        help="CPU seconds per timed round (sets the number of calls)")
    parser.add_argument("--only", default="", help="comma-separated name prefixes")
    parser.add_argument("--blas-threads", type=int, default=1)
    return with_blas_threads(run, parser.parse_args(argv))


def with_blas_threads(run, args) -> int:
    """`run(args)` with BLAS limited to `args.blas_threads` threads (where threadpoolctl is
    installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("threadpoolctl is not installed: BLAS uses its default thread count")
        return run(args)
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        return run(args)


def run(args) -> int:
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    rows = []
    for case in cases():
        if only and not any(case.name.startswith(p) for p in only):
            continue
        rows.append(measure(case, args.repeat, args.target))
        print(f"measured {case.name}", flush=True)
    print(f"\nEager vs to_static, device {rt.get_device()}, CPU ms per call (best of "
          f"{args.repeat} rounds, BLAS threads {args.blas_threads})\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
