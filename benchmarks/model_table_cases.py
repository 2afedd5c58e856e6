"""The cases of `benchmarks/model_table.py` as plain data, read by both of its sides: the d2s
side (this interpreter) and the PyTorch side (`torch_twins.py`, run by another interpreter that
has torch but not d2s). Only NumPy and the standard library are imported here.

A case names a model, the inputs it takes (shapes with `B` for the batch), the labels of its
training loss and the loss itself; both sides build their own model of that name and feed it
arrays made by `make_arrays` from the same seed, so the two sides time the same shapes.
"""
from __future__ import annotations

import json
import time

import numpy as np

# Input and label specs: ("float", shape) standard normal; ("int", shape, low, high) uniform
# integers in [low, high); ("binary", shape) 0.0 / 1.0 floats. "B" in a shape is the batch.
# loss: "mean" (mean of the output), "ce" (cross entropy of the logits flattened to
# [-1, classes] against the flattened labels), "ce_first" (the same on the first output of a
# tuple), "bce" (binary cross entropy with logits).
CASES = [
    {"name": "ResNet basic block", "train_batch": 16, "inputs": [("float", ["B", 16, 32, 32])],
     "loss": "mean", "quick_inputs": [("float", ["B", 4, 8, 8])]},
    {"name": "Transformer encoder layer", "train_batch": 16,
     "inputs": [("float", ["B", 64, 256])], "loss": "mean",
     "quick_inputs": [("float", ["B", 8, 16])]},
    {"name": "LeNet 28x28", "train_batch": 32, "inputs": [("float", ["B", 1, 28, 28])],
     "labels": ("int", ["B"], 0, 10), "loss": "ce"},
    {"name": "ResNet (2 stages x 2 blocks)", "train_batch": 16,
     "inputs": [("float", ["B", 3, 16, 16])], "labels": ("int", ["B"], 0, 10), "loss": "ce"},
    {"name": "MobileNet (width 0.5)", "train_batch": 16, "inputs": [("float", ["B", 3, 32, 32])],
     "labels": ("int", ["B"], 0, 10), "loss": "ce"},
    {"name": "LSTM LM (T=20)", "train_batch": 16, "inputs": [("int", ["B", 20], 0, 50)],
     "labels": ("int", ["B", 20], 0, 50), "loss": "ce_first"},
    {"name": "Seq2Seq teacher forcing", "train_batch": 16,
     "inputs": [("int", ["B", 8], 3, 16), ("int", ["B"], 2, 9), ("int", ["B", 6], 3, 16)],
     "labels": ("int", ["B", 6], 3, 16), "loss": "ce"},
    {"name": "BERT classifier (T=16)", "train_batch": 16, "inputs": [("int", ["B", 16], 1, 60)],
     "labels": ("int", ["B"], 0, 2), "loss": "ce"},
    {"name": "DeepFM", "train_batch": 256, "inputs": [("int", ["B", 4], 0, 4),
                                                      ("float", ["B", 3])],
     "labels": ("binary", ["B"]), "loss": "bce"},
    {"name": "Speech Conv1D+GRU (T=40)", "train_batch": 8,
     "inputs": [("float", ["B", 40, 8]), ("int", ["B"], 10, 41)],
     "labels": ("int", ["B"], 0, 6), "loss": "ce"},
]

# (task, batch) rows of each case; quick mode keeps the tasks at small batches.
INFER_BATCHES = {"full": (1, 32), "quick": (1, 4)}
QUICK_TRAIN_BATCH = 2


def tasks(case: dict, quick: bool) -> list[tuple[str, int]]:
    """[("train", batch), ("infer", 1), ("infer", 32)] (quick: smaller batches)."""
    train = QUICK_TRAIN_BATCH if quick else case["train_batch"]
    infer = INFER_BATCHES["quick" if quick else "full"]
    return [("train", train)] + [("infer", b) for b in infer]


def input_specs(case: dict, quick: bool) -> list:
    return case.get("quick_inputs", case["inputs"]) if quick else case["inputs"]


def _array(spec, batch: int, rng: np.random.RandomState) -> np.ndarray:
    shape = [batch if d == "B" else d for d in spec[1]]
    if spec[0] == "float":
        return rng.randn(*shape).astype(np.float32)
    if spec[0] == "binary":
        return rng.randint(0, 2, shape).astype(np.float32)
    return rng.randint(spec[2], spec[3], shape).astype(np.int64)


def make_arrays(case: dict, batch: int, quick: bool, seed: int = 0):
    """(inputs, labels or None) of `case` at `batch`, as NumPy arrays."""
    rng = np.random.RandomState(seed)
    inputs = [_array(spec, batch, rng) for spec in input_specs(case, quick)]
    labels = _array(case["labels"], batch, rng) if "labels" in case else None
    return inputs, labels


def best_ms(fn, repeat: int, target: float, clock) -> float:
    """The best milliseconds per call of `fn` over `repeat` rounds, each round `number` calls
    where `number` makes a round last about `target` seconds of `clock`; two calls warm up."""
    fn(), fn()
    start = clock()
    fn()
    number = max(1, int(target / max(clock() - start, 1e-5)))
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            fn()
        best = min(best, (clock() - start) / number * 1e3)
    return best


def clock_for(threads: int):
    """CPU time of the process on one thread (load from other processes on a shared machine
    does not count); wall-clock time on more, where CPU time would add up the threads."""
    return time.process_time if threads == 1 else time.perf_counter


def emit(row: dict) -> None:
    """One measured row as a JSON line, the format both sides print for model_table.py."""
    print("ROW " + json.dumps(row), flush=True)
