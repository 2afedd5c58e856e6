"""Inference: a model loaded from its files (`d2s.load`) vs the live `d2s.to_static` Layer vs
plain NumPy, side by side in one run.

Workloads: an MLP 784-256-256-10 (ReLU) at batch 1 and 64, and a small model with a tensor
`if` and a tensor `while` (the `Gate` of tests/deploy/damage.py: Linear 4-3, then tanh·scale or
minus one, then three halvings) at batch 8. Each row is checked against the NumPy answer before
it is timed; the ratio is to plain NumPy. The time `d2s.load` takes (read, check, compile) is
printed under the table.

    python benchmarks/inference.py [--repeat 15] [--number 200]

Adding a runtime (onnxruntime, ...): append `(label, factory)` to `RUNNERS`, where
`factory(layer, prefix, example)` returns a function of the NumPy input (or None when that
runtime is not available), and the row appears in every workload.
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

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from tests.deploy.damage import Gate  # noqa: E402


class MLP(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = (rt.nn.Linear(784, 256), rt.nn.Linear(256, 256),
                                        rt.nn.Linear(256, 10))

    def forward(self, x):
        return self.fc3(rt.nn.functional.relu(self.fc2(rt.nn.functional.relu(self.fc1(x)))))


def numpy_mlp(layer):
    w = [(l.weight.numpy(), l.bias.numpy()) for l in (layer.fc1, layer.fc2, layer.fc3)]

    def run(x):
        h = np.maximum(x @ w[0][0] + w[0][1], 0)
        h = np.maximum(h @ w[1][0] + w[1][1], 0)
        return h @ w[2][0] + w[2][1]
    return run


def numpy_gate(layer):
    w, b, scale = layer.fc.weight.numpy(), layer.fc.bias.numpy(), layer.scale.numpy()
    steps = int(layer.steps.numpy()[0])

    def run(x):
        y = x @ w + b
        y = np.tanh(y) * scale if y.mean() > 0 else y - np.float32(1.0)
        for _ in range(steps):
            y = y * np.float32(0.5) + np.float32(1.0)
        return y
    return run


def _live(layer, prefix, example):
    static = d2s.to_static(layer)
    return lambda x: static(rt.to_tensor(x)).numpy()


def _loaded(layer, prefix, example):
    model = d2s.load(prefix)
    return lambda x: model(rt.to_tensor(x)).numpy()


# (label, factory(layer, prefix, example) -> fn(np.ndarray) -> np.ndarray, or None)
RUNNERS = [
    ("live d2s.to_static Layer", _live),
    ("loaded d2s.load(PATH)", _loaded),
]

# (name, make layer, NumPy version, input shape with None for the batch, batch)
WORKLOADS = [
    ("MLP 784-256-256-10", MLP, numpy_mlp, [None, 784], 1),
    ("MLP 784-256-256-10", MLP, numpy_mlp, [None, 784], 64),
    ("Gate (tensor if + while)", Gate, numpy_gate, [None, 4], 8),
]


def best_us(fns: list, repeat: int, number: int) -> list:
    """Best-of-`repeat` µs per call of each function, in interleaved rounds."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timeit.timeit(fn, number=number) / number * 1e6)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=200)
    args = ap.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="d2s-inference-")
    rows, loads = [], []
    for i, (name, make, numpy_version, shape, batch) in enumerate(WORKLOADS):
        rt.seed(0)
        layer = make()
        layer.eval()
        prefix = os.path.join(folder, f"model{i}")
        d2s.save(layer, prefix, input_spec=[d2s.InputSpec(shape, "float32")])
        t = time.perf_counter()
        d2s.load(prefix)
        loads.append((name, (time.perf_counter() - t) * 1e3))
        x = np.random.default_rng(0).standard_normal([batch] + shape[1:]).astype(np.float32)
        labels, fns = ["plain NumPy"], [numpy_version(layer)]
        for label, factory in RUNNERS:
            fn = factory(layer, prefix, x)
            if fn is not None:
                labels.append(label)
                fns.append(fn)
        expected = fns[0](x)
        for label, fn in zip(labels, fns):
            np.testing.assert_allclose(fn(x), expected, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{label} on {name}")
        times = best_us([lambda fn=fn: fn(x) for fn in fns], args.repeat, args.number)
        for label, us in zip(labels, times):
            rows.append((f"{name}, batch {batch}", label, us, us / times[0]))
    print("| workload | runs as | µs per call | × plain NumPy |\n|---|---|---:|---:|")
    for workload, label, us, ratio in rows:
        print(f"| {workload} | {label} | {us:.2f} | {ratio:.2f} |")
    print()
    for name, ms in dict(loads).items():
        print(f"d2s.load of {name}: {ms:.1f} ms (read, check, compile)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
