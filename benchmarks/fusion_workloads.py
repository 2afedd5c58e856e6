"""The three workloads of `benchmarks/fusion.py`, written once for every array library (`m`
is its namespace: NumPy, runtime, torch, jax.numpy), and the JAX column.

JAX is measured in the Python that has it: `python benchmarks/fusion_workloads.py --jax ROWS
COLS REPEAT NUMBER` prints, per workload, the best seconds per call of plain NumPy and of
`jax.jit` measured side by side in that process, and of jit's first call (one thread: XLA's
CPU client is limited to one with `--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1`), as JSON.
`benchmarks/fusion.py` runs it with `D2S_BENCH_JAX_PYTHON` when jax is not importable itself.
"""
from __future__ import annotations

import json
import os
import sys
import time
import timeit


def gelu(x, m):
    return 0.5 * x * (1.0 + m.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def gelu_exact(x, m):
    """GELU with erf as `m.gelu` computes it (`runtime`: `F.gelu`, one op; plain NumPy: erf
    by the op's own NumPy kernel, the eager path)."""
    return m.gelu(x)


def softmax(x, m):
    """Softmax over the last axis (`runtime`: `F.softmax`, the C row kernel; plain NumPy:
    max, exp, sum, divide)."""
    return m.softmax(x)


def bias_residual_layernorm(x, bias, res, m):
    h = x + bias + res
    mu = m.mean(h, axis=-1, keepdims=True)
    d = h - mu
    var = m.mean(d * d, axis=-1, keepdims=True)
    return d / m.sqrt(var + 1e-5)


def adam(p, g, mom, vel, m):
    mom = 0.9 * mom + 0.1 * g
    vel = 0.999 * vel + 0.001 * (g * g)
    p = p - 0.001 * (mom / 0.1) / (m.sqrt(vel / 0.001) + 1e-8)
    return p, mom, vel


NAMES = ("GELU (tanh form)", "GELU (exact, erf)", "softmax (last axis)",
         "bias + residual + LayerNorm", "Adam update")


def numpy_softmax(x):
    import numpy as np
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_gelu(x):
    """Exact GELU in plain NumPy: 0.5 x (1 + erf(x / sqrt(2))), erf as eager mode computes it
    (NumPy has none)."""
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from runtime.ops.math import _erf_kernel
    return 0.5 * x * (1.0 + _erf_kernel(np, x * x.dtype.type(0.7071067811865476)))


def jax_times(rows: int, cols: int, repeat: int, number: int) -> dict:
    """{workload: (NumPy seconds, jax.jit seconds, best of `repeat` interleaved rounds;
    seconds of jax.jit's first call)}."""
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    import jax
    import jax.numpy as jnp
    import numpy as np
    rng = np.random.default_rng(0)
    x, r, g, mo, v, p = (rng.standard_normal((rows, cols)).astype("float32") for _ in range(6))
    v = np.abs(v)
    b = rng.standard_normal(cols).astype("float32")
    cases = [(lambda a: gelu(a, jnp), lambda: gelu(x, np), (x,)),
             (lambda a: jax.nn.gelu(a, approximate=False), lambda: numpy_gelu(x), (x,)),
             (lambda a: jax.nn.softmax(a, axis=-1), lambda: numpy_softmax(x), (x,)),
             (lambda a, c, d: bias_residual_layernorm(a, c, d, jnp),
              lambda: bias_residual_layernorm(x, b, r, np), (x, b, r)),
             (lambda *a: adam(*a, jnp), lambda: adam(p, g, mo, v, np), (p, g, mo, v))]
    out = {}
    for name, (fn, ref, arrays) in zip(NAMES, cases):
        jitted = jax.jit(fn)
        dev = [jnp.asarray(a) for a in arrays]
        t0 = time.perf_counter()
        jax.block_until_ready(jitted(*dev))  # the first call: trace, compile, run
        first = time.perf_counter() - t0

        def run(jitted=jitted, dev=dev):
            jax.block_until_ready(jitted(*dev))

        best = [float("inf")] * 2
        for _ in range(repeat):
            for i, f in enumerate((ref, run)):
                best[i] = min(best[i], timeit.timeit(f, number=number) / number)
        out[name] = best + [first]
    return out


if __name__ == "__main__" and sys.argv[1:2] == ["--jax"]:
    print(json.dumps(jax_times(*(int(a) for a in sys.argv[2:6]))))
