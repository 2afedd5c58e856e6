"""Inference: plain NumPy vs live `d2s.to_static` vs the loaded model (`d2s.load`) vs
onnxruntime on the `d2s.onnx` export, side by side in one run.

Workloads: an MLP 784-256-256-10 (ReLU), LeNet 28x28, and LeNet 8x8 float and int8 (PTQ,
`rt.quantization.convert`), each at batch 1 and 32. Plain NumPy is written out for the MLP
only. Rows are timed in interleaved rounds (`repeat` rounds of `number` calls; the best round
counts), as CPU time of this process; BLAS and onnxruntime use one thread, so the rows compare
the same amount of hardware.

    python benchmarks/onnx_inference.py [--repeat 7] [--number 100]

prints a Markdown table: µs per call and the ratio to the live `to_static` call.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
import timeit

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from examples.models import LeNet  # noqa: E402


class MLP(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = (rt.nn.Linear(784, 256), rt.nn.Linear(256, 256),
                                     rt.nn.Linear(256, 10))

    def forward(self, x):
        return self.l3(rt.nn.functional.relu(self.l2(rt.nn.functional.relu(self.l1(x)))))


def numpy_mlp(model):
    ws = [(m.weight.numpy(), m.bias.numpy()) for m in (model.l1, model.l2, model.l3)]

    def run(x):
        for i, (w, b) in enumerate(ws):
            x = x @ w + b
            if i < 2:
                x = np.maximum(x, 0)
        return x
    return run


def int8_lenet():
    rt.seed(0)
    model = LeNet(image_size=8).eval()
    Q = rt.quantization
    ptq = Q.PTQ(Q.QuantConfig())
    observed = ptq.quantize(model)
    rng = np.random.default_rng(0)
    for _ in range(4):
        observed(rt.to_tensor(rng.random((32, 1, 8, 8)).astype("float32")))
    return ptq.convert(observed)


def workloads():
    rt.seed(0)
    mlp = MLP().eval()
    return [("MLP 784-256-256-10", mlp, (784,), numpy_mlp(mlp)),
            ("LeNet 28x28", LeNet(image_size=28).eval(), (1, 28, 28), None),
            ("LeNet 8x8", LeNet(image_size=8).eval(), (1, 8, 8), None),
            ("LeNet 8x8 int8 (PTQ)", int8_lenet(), (1, 8, 8), None)]


def best_us(fns, repeat, number):
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = timeit.timeit(fn, number=number, timer=time.process_time)
            best[i] = min(best[i], t / number * 1e6)
    return best


def rows_for(name, model, shape, plain, batch, work, repeat, number):
    import onnxruntime as ort

    import d2s.onnx
    spec = [d2s.InputSpec([None, *shape], "float32")]
    x = np.random.default_rng(1).random((batch, *shape)).astype("float32")
    live = d2s.to_static(copy.deepcopy(model))
    prefix = os.path.join(work, name.split()[0] + str(abs(hash(name))))
    d2s.save(live, prefix, input_spec=spec)
    loaded = d2s.load(prefix)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(d2s.onnx.export(live, prefix, input_spec=spec), opts,
                                providers=["CPUExecutionProvider"])
    feed_name = sess.get_inputs()[0].name
    xt = rt.to_tensor(x)
    want = live(xt).numpy()
    fns = {"live to_static": lambda: live(xt), "d2s.load": lambda: loaded(xt),
           "onnxruntime": lambda: sess.run(None, {feed_name: x})}
    if plain is not None:
        fns["plain NumPy"] = lambda: plain(x)
        np.testing.assert_allclose(plain(x), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(loaded(xt).numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sess.run(None, {feed_name: x})[0], want, rtol=1e-3, atol=0.1)
    with rt.no_grad():
        us = best_us(list(fns.values()), repeat, number)
    base = us[0]
    return [(f"{name}, batch {batch}", k, u, u / base) for k, u in zip(fns, us)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=100)
    args = ap.parse_args(argv)
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        print("onnxruntime is not installed: pip install onnxruntime (or, in the d2s checkout, "
              "pip install '.[onnx]')")
        return 1
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, model, shape, plain in workloads():
            for batch in (1, 32):
                rows += rows_for(name, model, shape, plain, batch, work, args.repeat,
                                 args.number)
                print(f"measured {name}, batch {batch}", flush=True)
    print(f"\nInference, CPU µs per call (best of {args.repeat} rounds of {args.number}); "
          "ratio to live to_static\n")
    print("| workload | runner | µs per call | × to_static |\n|---|---|---:|---:|")
    for workload, runner, us, ratio in rows:
        print(f"| {workload} | {runner} | {us:.1f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
