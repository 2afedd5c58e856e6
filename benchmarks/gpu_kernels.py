"""The GPU kernels d2s generates: each checked against NumPy first, then timed against plain
CuPy (a step of `benchmarks/gpu_check.sh`).

    python benchmarks/gpu_kernels.py [--repeat 5] [--number 20]   # on a GPU
    python benchmarks/gpu_kernels.py --dry-run                     # anywhere: see below

Checks (exit status 1 if one fails; the timings still run): the loop kernel of a tensor `if`
+ `while` (`cuda_loops.py`) on both branches and two shapes, and of a recurrent matmul loop
with 0, 1 and 10 trips; a fused elementwise chain (`fusion_gpu.py`); the softmax and
LayerNorm kernels (`cuda_rows.py`); BatchNorm + ReLU forward and backward
(`cuda_batch_norm.py`) against the CPU path's values and gradients, and chosen by a converted
Conv -> BatchNorm -> ReLU's program forward and backward; `conv2d` and its gradients through
cuDNN (`conv_cudnn.py`) against the CPU path. Timings, ms per call (best of `--repeat`):

- the `if` + `while` function on f32[4, 16]: plain CuPy (the same Python on CuPy arrays), the
  converted program op by op (`D2S_NATIVE=0`) and as one kernel;
- GELU on f32[2048, 1024]: plain CuPy, converted unfused (`D2S_FUSION=0`) and fused;
- softmax on f32[16, 4, 64, 64] and LayerNorm on f32[16, 64, 256]: plain CuPy, the kernel;
- BatchNorm + ReLU forward and backward on f32[16, 16, 32, 32]: plain CuPy, the two kernels;
- a training step (forward, backward, SGD) of the ResNet basic block on [16, 16, 32, 32] and
  of a Transformer encoder layer (d 256, 4 heads, FFN 1024) on [16, 64, 256]: eager and
  converted (no plain-CuPy twin: it would be a second implementation of the layers).

`--dry-run` runs all of it on the CPU against `tests/fake_cupy.py`, every generated kernel
compiled from its very text by `tests/cuda_host.py`, with small sizes and one call each, so
that a test (`tests/static/test_gpu_check_dry_run.py`) keeps the script working; its
times mean nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests"), os.path.join(ROOT, "examples")]
import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import backend
from runtime.program import native_build

SIZES = {  # name -> (full size, dry-run size)
    "gelu": ((2048, 1024), (8, 16)), "softmax": ((16, 4, 64, 64), (2, 2, 3, 40)),
    "layer_norm": ((16, 64, 256), (2, 3, 40)), "block": ((16, 16, 32, 32), (2, 16, 6, 6)),
    "encoder": ((16, 64, 256), (2, 4, 32)),
}


def gate_while(x):
    """A tensor `if` on a mean, then a 10-step tensor `while` (as test_cuda_loops.py's)."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    i = rt.zeros([1], "int64")
    while i < 10:
        y = y * 0.5 + 1.0
        i += 1
    return y


def numpy_gate_while(x):
    t = x.dtype.type
    y = x * t(2.0) if x.mean() > 0 else -x
    for _ in range(10):
        y = y * t(0.5) + t(1.0)
    return y


def plain_gate_while(xp, x):
    """`gate_while` as plain array code (CuPy: one kernel per op, the tests on the host)."""
    y = x * np.float32(2.0) if bool(x.mean() > 0) else -x
    i = xp.zeros(1, np.int64)
    while bool(i < 10):
        y = y * np.float32(0.5) + np.float32(1.0)
        i += 1
    return y


def recurrent(h, w, n):
    i = rt.zeros([1], "int64")
    while i < n:
        h = rt.tanh(rt.matmul(h, w) + 0.5)
        i += 1
    return h


def gelu(x):
    return 0.5 * x * (1.0 + rt.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def _plain_gelu(x):
    return 0.5 * x * (1.0 + backend.XP.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def _plain_softmax(x):
    e = backend.XP.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _plain_layer_norm(x):
    m = x.mean(-1, keepdims=True)
    return (x - m) / backend.XP.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


@contextlib.contextmanager
def _env(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update({k: str(v) for k, v in values.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def _sync() -> None:
    if backend.XP is not np:
        backend.XP.cuda.Device().synchronize()


def _calls() -> int:
    return native_build.stats()["native_calls"]


# ---- checks -----------------------------------------------------------------------------------
def _check(name, got, want, rtol, atol, results, kernels=None):
    """One row of the check table: the largest difference, and whether it is within tolerance
    (and `kernels`, when given, says the generated kernel ran)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    diff = float(np.max(np.abs(got - want))) if got.size else 0.0
    ok = got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)
    ok = ok and (kernels is None or kernels)
    results.append((name, diff, ok))


def _loop_checks(dry, rng, out) -> None:
    static = d2s.to_static(gate_while)
    for shape, dtype in (((4, 16), "float32"), ((300,), "float64")):
        for sign in (1.0, -1.0):
            x = (sign * rng.uniform(0.1, 2.0, shape)).astype(dtype)
            before = _calls()
            got = static(rt.to_tensor(x)).numpy()
            _check(f"loop kernel: if + while, {dtype}{list(shape)}, mean {'>' if sign > 0 else '<'}"
                   " 0", got, numpy_gate_while(x), 0, 0, out, _calls() - before == 1)


def _recurrent_checks(dry, rng, out) -> None:
    h = rng.standard_normal((4, 16)).astype("float32")
    w = (rng.standard_normal((16, 16)) * 0.3).astype("float32")
    loop = d2s.to_static(recurrent)
    for n in (0, 1, 10):
        want = h.copy()
        for _ in range(n):
            want = np.tanh(want @ w + np.float32(0.5))
        before = _calls()
        got = loop(rt.to_tensor(h), rt.to_tensor(w), rt.to_tensor(np.array([n]))).numpy()
        _check(f"loop kernel: recurrent matmul, {n} trips", got, want, 1e-5, 1e-6, out,
               _calls() - before == 1)


def _fused_check(dry, rng, out) -> None:
    x = rng.standard_normal(SIZES["gelu"][dry]).astype("float32")
    with _env(D2S_FUSION="1"):
        got = d2s.to_static(gelu)(rt.to_tensor(x)).numpy()
    _check("fused chain: GELU", got, 0.5 * x * (1 + np.tanh(0.7978845608 * (
        x + 0.044715 * x ** 3))), 1e-5, 1e-6, out)


def _row_checks(dry, rng, out) -> None:
    x = rng.standard_normal(SIZES["softmax"][dry]).astype("float32") * 3
    e = np.exp(x - x.max(-1, keepdims=True))
    _check("softmax kernel", F.softmax(rt.to_tensor(x), -1).numpy(),
           e / e.sum(-1, keepdims=True), 1e-5, 1e-7, out)
    x = rng.standard_normal(SIZES["layer_norm"][dry]).astype("float32") + 1
    m = x.mean(-1, keepdims=True)
    _check("LayerNorm kernel", F.layer_norm(rt.to_tensor(x), [x.shape[-1]]).numpy(),
           (x - m) / np.sqrt(x.var(-1, keepdims=True) + 1e-5), 1e-4, 1e-5, out)


def _bn_relu_inputs(dry, rng):
    x = rng.standard_normal(SIZES["block"][dry]).astype("float32") * 2 + 0.3
    c = x.shape[1]
    w, b = rng.uniform(0.5, 1.5, c).astype("float32"), rng.standard_normal(c).astype("float32")
    return x, w, b, rng.standard_normal(x.shape).astype("float32")


def _bn_relu_checks(dry, rng, out) -> None:
    """BatchNorm + ReLU forward and backward kernels (`cuda_batch_norm.py`, training) against
    the CPU path: the batch_norm op, relu, and their gradients."""
    from runtime.ops.nn_norm import batch_norm
    from runtime.program import cuda_batch_norm as cbn
    x, w, b, dy = _bn_relu_inputs(dry, rng)
    xp = backend.XP
    dx, dw, db, ddy = (xp.asarray(a) for a in (x, w, b, dy))
    y, mean, var = cbn.batch_norm_relu(xp, dx, None, None, dw, db, True, 1e-5)
    grads = cbn.batch_norm_relu_grad(xp, ddy, dx, y, mean, var, dw, db, True, 1e-5)
    got = [backend.to_numpy(a) for a in (y, *grads)]
    device = backend.get_device()
    rt.set_device("cpu")
    try:
        xt, wt, bt = (rt.to_tensor(a, stop_gradient=False) for a in (x, w, b))
        want_y = F.relu(batch_norm(xt, None, None, wt, bt, training=True)[0])
        (want_y * rt.to_tensor(dy)).sum().backward()
        want = [t.numpy() for t in (want_y, xt.grad, wt.grad, bt.grad)]
    finally:
        rt.set_device(device)
    for name, g, e in zip(("forward", "input gradient", "weight gradient", "bias gradient"),
                          got, want, strict=True):
        _check(f"BatchNorm + ReLU kernel: {name}", g, e, 1e-4, 1e-4, out)


def _bn_relu_program_check(dry, rng, out) -> None:
    """A converted Conv -> BatchNorm -> ReLU trained one call on the device: the program
    selects the fused op (`passes/batch_norm_relu.py`), whose forward and backward must be
    the CUDA kernels, against the unfused program on the CPU (values and gradients)."""
    from runtime.program import cuda_batch_norm as cbn
    x, _, _, dy = _bn_relu_inputs(dry, rng)
    c = x.shape[1]

    def run():
        rt.seed(0)
        layer = rt.nn.Sequential(rt.nn.Conv2D(c, c, 3, padding=1, bias_attr=False),
                                 rt.nn.BatchNorm2D(c), rt.nn.ReLU())
        static = d2s.to_static(_ConvBnRelu(layer))
        xt = rt.to_tensor(x, stop_gradient=False)
        y = static(xt)
        (y * rt.to_tensor(dy)).sum().backward()
        return [t.numpy() for t in (y, xt.grad, layer[0].weight.grad, layer[1].weight.grad)]

    used = []
    real = cbn.batch_norm_relu, cbn.batch_norm_relu_grad

    def spy(fn, name):
        def call(*args, **kw):
            got = fn(*args, **kw)
            if kw.get("relu", True):
                used.append((name, got is not None))
            return got
        return call

    cbn.batch_norm_relu, cbn.batch_norm_relu_grad = (spy(real[0], "forward"),
                                                     spy(real[1], "backward"))
    try:
        got = run()
    finally:
        cbn.batch_norm_relu, cbn.batch_norm_relu_grad = real
    device = backend.get_device()
    rt.set_device("cpu")
    try:
        with _env(D2S_FUSION="0"):
            want = run()
    finally:
        rt.set_device(device)
    out.append(("converted BatchNorm + ReLU: the CUDA kernels chosen", 0.0,
                used == [("forward", True), ("backward", True)]))
    for name, g, e in zip(("forward", "input gradient", "conv weight gradient",
                           "BatchNorm weight gradient"), got, want, strict=True):
        _check(f"converted BatchNorm + ReLU: {name}", g, e, 1e-4, 1e-4, out)


class _ConvBnRelu(rt.nn.Layer):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x):
        return self.layers(x)


def _conv_checks(dry, rng, out) -> None:
    """conv2d and its two gradients on the device (cuDNN where it is) against the CPU."""
    x = rng.standard_normal((2, 4, 7, 7)).astype("float32")
    w = rng.standard_normal((6, 4, 3, 3)).astype("float32")

    def run():
        xt, wt = rt.to_tensor(x, stop_gradient=False), rt.to_tensor(w, stop_gradient=False)
        y = F.conv2d(xt, wt, padding=1, stride=2)
        (y * y).sum().backward()
        return [y.numpy(), xt.grad.numpy(), wt.grad.numpy()]

    got = run()
    device = backend.get_device()
    rt.set_device("cpu")
    try:
        want = run()
    finally:
        rt.set_device(device)
    for name, g, e in zip(("forward", "input gradient", "weight gradient"), got, want,
                          strict=True):
        _check(f"conv2d {name} (cuDNN where present)", g, e, 1e-4, 1e-4, out)


# each appends (name, largest difference, passed) rows; one that raises is one failed row
CHECKS = (_loop_checks, _recurrent_checks, _fused_check, _row_checks, _bn_relu_checks,
          _bn_relu_program_check, _conv_checks)


# ---- timings ----------------------------------------------------------------------------------
def _best_ms(fn, repeat: int, number: int) -> float:
    fn()
    _sync()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        _sync()
        best = min(best, (time.perf_counter() - t) / number * 1e3)
    return best


def _loop_timing(dry, rng):
    xp = backend.XP
    host = rng.uniform(0.1, 2.0, (4, 16)).astype("float32")
    x, a = rt.to_tensor(host), xp.asarray(host)
    with _env(D2S_NATIVE="0"):
        per_op = d2s.to_static(gate_while)
        per_op(x)
    one = d2s.to_static(gate_while)
    return "if + while, f32[4, 16]", {"plain CuPy": lambda: plain_gate_while(xp, a),
                                      "d2s op by op": lambda: per_op(x),
                                      "d2s one kernel": lambda: one(x)}


def _gelu_timing(dry, rng):
    host = rng.standard_normal(SIZES["gelu"][dry]).astype("float32")
    x, a = rt.to_tensor(host), backend.XP.asarray(host)
    with _env(D2S_FUSION="0"):
        unfused = d2s.to_static(gelu)
        unfused(x)
    fused = d2s.to_static(gelu)
    return f"GELU, f32{list(x.shape)}", {"plain CuPy": lambda: _plain_gelu(a),
                                         "d2s unfused": lambda: unfused(x),
                                         "d2s fused": lambda: fused(x)}


def _row_timing(name, plain, kernel):
    def workload(dry, rng):
        host = rng.standard_normal(SIZES[name][dry]).astype("float32")
        t, a = rt.to_tensor(host), backend.XP.asarray(host)
        return f"{name}, f32{list(t.shape)}", {"plain CuPy": lambda: plain(a),
                                               "d2s kernel": lambda: kernel(t)}
    return workload


def _plain_bn_relu(xp, x, w, b, dy):
    """BatchNorm (training) + ReLU forward and backward in CuPy array code."""
    axes, shape = (0, 2, 3), (1, -1, 1, 1)
    xc = x - x.mean(axes, keepdims=True)
    inv = 1 / xp.sqrt((xc * xc).mean(axes, keepdims=True) + 1e-5)
    xh = xc * inv
    y = xp.maximum(xh * w.reshape(shape) + b.reshape(shape), 0)
    g = dy * (y > 0)
    n = x.size // x.shape[1]
    sg, sgx = g.sum(axes, keepdims=True), (g * xh).sum(axes, keepdims=True)
    return y, w.reshape(shape) * inv * (g - sg / n - xh * sgx / n), sgx, sg


def _bn_relu_timing(dry, rng):
    from runtime.program import cuda_batch_norm as cbn
    xp = backend.XP
    x, w, b, dy = (xp.asarray(a) for a in _bn_relu_inputs(dry, rng))

    def kernels():
        y, mean, var = cbn.batch_norm_relu(xp, x, None, None, w, b, True, 1e-5)
        return cbn.batch_norm_relu_grad(xp, dy, x, y, mean, var, w, b, True, 1e-5)

    return f"BatchNorm + ReLU forward + backward, f32{list(x.shape)}", {
        "plain CuPy": lambda: _plain_bn_relu(xp, x, w, b, dy), "d2s kernels": kernels}


def _block(dry: bool):
    from models.resnet import BasicBlock
    return BasicBlock(16, 16), SIZES["block"][dry]


def _encoder(dry: bool):
    d, heads, ffn = (32, 4, 64) if dry else (256, 4, 1024)
    return rt.nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0), SIZES["encoder"][dry]


def _step_timing(title, make):
    def workload(dry, rng):
        model, shape = make(dry)
        opt = rt.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
        x = rt.to_tensor(rng.standard_normal(shape).astype("float32"))

        def step(x):
            loss = model(x).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss

        converted = d2s.to_static(step)
        return f"{title}, {list(shape)}", {"d2s eager": lambda: step(x),
                                           "d2s converted": lambda: converted(x)}
    return workload


# each makes (title, {column: call}); the first column is the ratios' base
WORKLOADS = (_loop_timing, _gelu_timing,
             _row_timing("softmax", _plain_softmax, lambda t: F.softmax(t, -1)),
             _row_timing("layer_norm", _plain_layer_norm,
                         lambda t: F.layer_norm(t, [t.shape[-1]])),
             _bn_relu_timing,
             _step_timing("ResNet basic block step", _block),
             _step_timing("Transformer encoder layer step", _encoder))


# ---- main -------------------------------------------------------------------------------------
def check_table(results) -> str:
    lines = ["## GPU kernels against NumPy", "", "| kernel | max abs diff | ok |",
             "|---|---|---|"]
    return "\n".join(lines + [f"| {n} | {d:.3g} | {'yes' if ok else 'NO'} |"
                              for n, d, ok in results])


def timing_table(title, cols) -> str:
    base = cols[0][1]
    return "\n".join([
        "", f"## {title}, {backend.get_device()}, ms per call (ratio to {cols[0][0]})", "",
        "| " + " | ".join(c for c, _ in cols) + " |", "|" + "---|" * len(cols),
        "| " + " | ".join(f"{ms:.3f} ({ms / base:.2f}x)" for _, ms in cols) + " |"])


@contextlib.contextmanager
def _device(dry: bool):
    """The GPU: the real one, or for a dry run the fake CuPy with compiled kernels."""
    if not dry:
        rt.set_device("gpu")
        try:
            yield
        finally:
            rt.set_device("cpu")
        return
    import cuda_host
    import fake_cupy
    with fake_cupy.installed(), cuda_host.installed(), _env(D2S_NATIVE="sync"):
        yield


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--dry-run", action="store_true",
                    help="on the CPU: fake CuPy, kernels compiled on the host, small sizes")
    args = ap.parse_args(argv)
    if not args.dry_run and not rt.is_compiled_with_cuda():
        print("no usable CuPy + CUDA device (use --dry-run on the CPU)", file=sys.stderr)
        return 2
    repeat, number = (1, 1) if args.dry_run else (args.repeat, args.number)
    rng, results, failed = np.random.default_rng(0), [], []
    with _device(args.dry_run):
        for check in CHECKS:  # (all checks first: printed before any timing starts)
            try:
                check(args.dry_run, rng, results)
            except Exception as e:  # noqa: BLE001  (reported as a failed row, the rest run)
                results.append((f"{check.__name__}: {type(e).__name__}: {e}"[:300], np.nan,
                                False))
        print(check_table(results), flush=True)
        for workload in WORKLOADS:
            try:
                title, calls = workload(args.dry_run, rng)
                print(timing_table(title, [(c, _best_ms(fn, repeat, number))
                                           for c, fn in calls.items()]), flush=True)
            except Exception as e:  # noqa: BLE001  (reported, the rest run)
                failed.append(f"timing {workload.__name__}: {type(e).__name__}: {e}"[:300])
    failed = [n for n, _, ok in results if not ok] + failed
    if failed:
        print("FAILED: " + "; ".join(failed), file=sys.stderr)
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
