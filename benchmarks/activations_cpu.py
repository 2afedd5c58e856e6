"""GELU (tanh form and exact), sigmoid, softmax, LayerNorm and the GELUs' gradients: d2s's
fused C code against JAX `jit`, in CPU time per call on one thread (a measure the load of a
shared machine moves less than wall-clock ratios to NumPy timed in separate processes).

    D2S_BENCH_JAX_PYTHON=/tmp/jaxvenv/bin/python python benchmarks/activations_cpu.py \\
        [--rows 2048] [--cols 1024] [--rounds 3] [--repeat 5] [--number 3]

Each round measures d2s in this process, then JAX in its own (`--jax`: jax imported here, or
`D2S_BENCH_JAX_PYTHON`), alternately; a cell is the best of every round's best of `--repeat`
timings of `--number` calls (`time.process_time`). Rows: the converted function with its
fused runs in C (`D2S_NATIVE=sync`, built before timing); for the gradient rows the
converted function's output summed and differentiated (`.backward()`: forward and backward
programs, the sum eager between them) against `jax.grad` of the sum, which XLA computes as
the derivative alone (the value is dead), and against `jax.value_and_grad` of the sum (the
loss returned too, as d2s computes it: the like-for-like pair of a training step; the d2s
cell is the same measurement as the gradient row's); the backward rows are the like-for-like pair: d2s's
backward program (`gelu_grad`, one C loop) on x and a gradient dy against the jitted
`jax.vjp` of GELU applied to dy (the forward dead there too). The numbers are checked against
each other first.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import numpy as np

ROWS = ("GELU (tanh form)", "GELU (exact, erf)", "sigmoid", "softmax (last axis)",
        "LayerNorm (last axis)",
        "GELU (tanh form), gradient vs jax.grad", "GELU (exact, erf), gradient vs jax.grad",
        "GELU (tanh form), loss and gradient vs jax.value_and_grad",
        "GELU (exact, erf), loss and gradient vs jax.value_and_grad",
        "GELU (tanh form), backward: dx from x, dy", "GELU (exact, erf), backward: dx from x, dy")
FORWARD = 5  # rows before the gradient rows
VALUE = 7  # rows before the loss-and-gradient rows (d2s: the gradient rows' timing again)
GRADIENT = 9  # rows before the backward rows


def _best(fn, repeat: int, number: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - t0) / number)
    return best


def _checksum(value) -> float:
    """The sum of |value| in double: what both sides must agree on (to 1e-4)."""
    return float(np.abs(np.asarray(value, np.float64)).sum())


def _input(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((rows, cols)).astype("float32")


def d2s_times(rows, cols, repeat, number) -> dict:
    """{row: (CPU seconds per call, a checksum of the result)} for d2s."""
    os.environ["D2S_NATIVE"] = "sync"
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import d2s
    import runtime as rt
    from runtime.program import threads
    threads.set_num_threads(1)
    F = rt.nn.functional
    fns = [lambda x: F.gelu(x, approximate=True), F.gelu, F.sigmoid,
           lambda x: F.softmax(x, axis=-1),
           lambda x: F.layer_norm(x, [cols])]  # (one lambda a line: d2s reads its source)
    xa = _input(rows, cols)
    x = rt.to_tensor(xa)
    out = {}
    for name, fn in zip(ROWS[:FORWARD], fns):
        sf = d2s.to_static(fn)
        with rt.no_grad():
            value = sf(x).numpy()
            entry = sf.program_cache.last_entry
            out[name] = (_best(lambda entry=entry: entry.run([x]), repeat, number),
                         _checksum(value))
    for name, fn in zip(ROWS[FORWARD:VALUE], fns[:2], strict=True):
        sf = d2s.to_static(fn)
        xt = rt.to_tensor(xa, stop_gradient=False)

        def grad(sf=sf, xt=xt):
            xt.clear_gradient()
            sf(xt).sum().backward()

        grad()
        out[name] = (_best(grad, repeat, number),
                     _checksum(xt.grad.numpy()))
        out[ROWS[ROWS.index(name) + VALUE - FORWARD]] = out[name]  # (it has the loss too)
        part = sf.program_cache.last_entry._training.backward  # (the seed: the output's dy)
        backward, feed = part.backward.fn, {"x": xa, part.seed_names[0]: _dy(rows, cols)}
        out[ROWS[ROWS.index(name) + GRADIENT - FORWARD]] = (
            _best(lambda backward=backward, feed=feed: backward(feed), repeat, number),
            _checksum(backward(feed)[0]))
    return out


def _dy(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(1).standard_normal((rows, cols)).astype("float32")


def jax_times(rows, cols, repeat, number) -> dict:
    """{row: (CPU seconds per call, a checksum)} for JAX `jit`, one thread."""
    import jax
    import jax.numpy as jnp
    gelu_tanh = jax.nn.gelu

    def gelu_exact(a):
        return jax.nn.gelu(a, approximate=False)

    def layer_norm(a):
        d = a - a.mean(axis=-1, keepdims=True)
        return d / jnp.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5)

    fns = [gelu_tanh, gelu_exact, jax.nn.sigmoid, lambda a: jax.nn.softmax(a, axis=-1),
           layer_norm, jax.grad(lambda a: gelu_tanh(a).sum()),
           jax.grad(lambda a: gelu_exact(a).sum()),
           jax.value_and_grad(lambda a: gelu_tanh(a).sum()),  # (both returned: both live)
           jax.value_and_grad(lambda a: gelu_exact(a).sum()),
           lambda a, dy: jax.vjp(gelu_tanh, a)[1](dy)[0],
           lambda a, dy: jax.vjp(gelu_exact, a)[1](dy)[0]]
    x = jnp.asarray(_input(rows, cols))
    dy = jnp.asarray(_dy(rows, cols))
    out = {}
    for name, fn in zip(ROWS, fns, strict=True):
        jitted = jax.jit(fn)
        args = (x, dy) if ROWS.index(name) >= GRADIENT else (x,)
        value = jitted(*args)
        value = np.asarray(value[1] if isinstance(value, tuple) else value)  # (the gradient)
        out[name] = (_best(lambda jitted=jitted, args=args: jax.block_until_ready(jitted(*args)),
                           repeat, number), _checksum(value))
    return out


def _jax_in_its_process(args) -> tuple:
    """(column name, times) of JAX, here or in `D2S_BENCH_JAX_PYTHON`; None without JAX."""
    sizes = [str(v) for v in (args.rows, args.cols, args.repeat, args.number)]
    try:
        import jax
        return f"JAX {jax.__version__} jit", jax_times(*map(int, sizes))
    except ImportError:
        pass
    python = os.environ.get("D2S_BENCH_JAX_PYTHON")
    if not python:
        return None
    r = subprocess.run([python, os.path.abspath(__file__), "--jax", *sizes],
                       capture_output=True, text=True, check=True)
    name, times = json.loads(r.stdout.strip().splitlines()[-1])
    return name, times


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--number", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = (args.rows, args.cols, args.repeat, args.number)
    ours, theirs, column = {}, {}, None
    for _ in range(args.rounds):
        for name, (s, check) in d2s_times(*sizes).items():
            ours[name] = (min(s, ours.get(name, (s,))[0]), check)
        got = _jax_in_its_process(args)
        if got:
            column = got[0]
            for name, (s, check) in got[1].items():
                theirs[name] = (min(s, theirs.get(name, (s,))[0]), check)
    for name in ROWS:  # the same values on both sides (sums of |2 M float32|: to 1e-4)
        if name in theirs:
            a, b = ours[name][1], theirs[name][1]
            assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (name, a, b)
    print(f"| [{args.rows}, {args.cols}] float32, CPU ms per call, 1 thread | d2s fused C |" +
          (f" {column} | d2s / JAX |" if column else ""))
    print("|---|---:|" + ("---:|---:|" if column else ""))
    for name in ROWS:
        cells = [f"{ours[name][0] * 1e3:.2f}"]
        if name in theirs:
            cells += [f"{theirs[name][0] * 1e3:.2f}", f"{ours[name][0] / theirs[name][0]:.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__" and sys.argv[1:2] == ["--jax"]:
    import jax
    print(json.dumps([f"JAX {jax.__version__} jit (own process)",
                      jax_times(*(int(a) for a in sys.argv[2:6]))]))
elif __name__ == "__main__":
    main()
