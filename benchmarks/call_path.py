"""The call path of `@to_static`: an MLP 784-256-256-10 at batch 1 through a converted Layer
and a converted function, against plain NumPy and the bare compiled program, and the call
path alone (a one-op program on a [1, 4] tensor).

    python benchmarks/call_path.py [--repeat 15] [--number 300]

Rows, timed in interleaved rounds (best of `repeat`, µs per call, ratio to plain NumPy):

- plain NumPy: the same three layers written with `@` and `np.maximum`;
- bare program: the compiled program on a feed dict (`entry.fn(feed)`), no call path;
- `to_static` Layer / function, under `no_grad` (inference) and with gradients on (the call
  also records one autograd node);
- call path alone: `to_static` of `x + 1.0` on a [1, 4] tensor minus its bare program: the
  checks of the arguments against the program's signature (`d2s/fast_call.py`), the guards,
  the feed, the result; and with gradients on, a one-op Layer (`x + w`, `w` a parameter)
  minus its bare training forward: the same plus the one autograd node the call records.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
import runtime.nn.functional as F  # noqa: E402


class MLP(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = (rt.nn.Linear(784, 256), rt.nn.Linear(256, 256),
                                        rt.nn.Linear(256, 10))

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def best_us(fns: list, repeat: int, number: int) -> list:
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = timeit.Timer(fn, timer=time.process_time)  # CPU time: less noise from load
            best[i] = min(best[i], t.timeit(number=number) / number * 1e6)
    return best


def _entry(sf):
    forward = sf.forward if hasattr(sf, "forward") else sf
    return forward.program_cache.last_entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=300)
    args = ap.parse_args(argv)
    rt.seed(0)
    layer = MLP()
    ws = [(fc.weight.numpy(), fc.bias.numpy()) for fc in (layer.fc1, layer.fc2, layer.fc3)]
    weights = [(fc.weight, fc.bias) for fc in (layer.fc1, layer.fc2, layer.fc3)]

    def numpy_mlp(x):
        h = np.maximum(x @ ws[0][0] + ws[0][1], 0)
        h = np.maximum(h @ ws[1][0] + ws[1][1], 0)
        return h @ ws[2][0] + ws[2][1]

    def mlp(x):  # the same network as a function of the parameters it reads
        (w1, b1), (w2, b2), (w3, b3) = weights
        h = F.relu(F.linear(x, w1, b1))
        h = F.relu(F.linear(h, w2, b2))
        return F.linear(h, w3, b3)

    xa = np.random.default_rng(0).standard_normal((1, 784)).astype("float32")
    x = rt.to_tensor(xa)
    static_layer = d2s.to_static(layer)
    static_fn = d2s.to_static(mlp)
    with rt.no_grad():
        want = numpy_mlp(xa)
        for sf in (static_layer, static_fn):
            np.testing.assert_allclose(sf(x).numpy(), want, rtol=1e-4, atol=1e-5)
    entry = _entry(static_layer)
    feed = {entry.feed_names[0]: xa}
    no_grad = rt.no_grad()

    def inference(sf):
        def call():
            with no_grad:
                return sf(x)
        return call

    def tiny(v):
        return v + 1.0

    small = rt.to_tensor(np.ones((1, 4), "float32"))
    static_tiny = d2s.to_static(tiny)
    with no_grad:
        static_tiny(small)
    tiny_entry = _entry(static_tiny)
    tiny_feed = {tiny_entry.feed_names[0]: small._data}

    def tiny_call():
        with no_grad:
            return static_tiny(small)

    class Shift(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([4])

        def forward(self, v):
            return v + self.w

    shift = d2s.to_static(Shift())
    for _ in range(3):
        shift(small)
    shift_entry = _entry(shift)
    shift_forward = shift_entry._training.forward
    shift_feed = {shift_entry.feed_names[0]: small._data}

    rows = [("plain NumPy", lambda: numpy_mlp(xa)),
            ("bare program (entry.fn(feed))", lambda: entry.fn(feed)),
            ("to_static Layer, no_grad", inference(static_layer)),
            ("to_static function, no_grad", inference(static_fn)),
            ("to_static Layer, with gradients", lambda: static_layer(x)),
            ("to_static function, with gradients", lambda: static_fn(x)),
            ("call path alone: to_static(x + 1.0), no_grad", tiny_call),
            ("call path alone: its bare program", lambda: tiny_entry.fn(tiny_feed)),
            ("call path alone, with gradients: one-op Layer", lambda: shift(small)),
            ("call path alone, with gradients: its bare training forward",
             lambda: shift_forward.fn(shift_feed))]
    times = best_us([f for _, f in rows], args.repeat, args.number)
    print("| MLP 784-256-256-10, batch 1 | µs per call | × plain NumPy |\n|---|---:|---:|")
    for (label, _), us in zip(rows[:6], times):
        print(f"| {label} | {us:.2f} | {us / times[0]:.2f} |")
    print(f"| call path alone (to_static of x + 1.0 on [1, 4], no_grad, minus its bare "
          f"program) | {times[6] - times[7]:.2f} | |")
    print(f"| call path alone, with gradients (one-op Layer x + w on [1, 4], minus its bare "
          f"training forward) | {times[8] - times[9]:.2f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
