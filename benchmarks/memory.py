"""Peak memory of one inference call and one training step, eager vs converted, measured with
`tracemalloc` (NumPy reports its array allocations to it), for ResNet and a Transformer
encoder.

    python benchmarks/memory.py [--batch 16]

The converted program frees each value right after its last use (the executor generates a
`del` there) and fuses elementwise chains, so its peak is at most eager's. A second table
gives the peak of one bias + residual + LayerNorm call on [2048, 1024] float32 (8 MB per
value): plain NumPy, converted unfused, fused NumPy code and fused C.
"""
from __future__ import annotations

import argparse
import os
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import d2s  # noqa: E402
import runtime as rt  # noqa: E402
from examples.models import ResNet  # noqa: E402


class Encoder(rt.nn.Layer):
    def __init__(self, d_model=128, heads=4, layers=2):
        super().__init__()
        self.encoder = rt.nn.TransformerEncoder(
            rt.nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0), layers)
        self.head = rt.nn.Linear(d_model, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(axis=1))


def peak(fn) -> int:
    fn()  # warm: traced, compiled, caches filled
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return top - base


def rows(name, make, x):
    out = []
    for mode in ("eager", "converted"):
        rt.seed(0)
        model = make()
        if mode == "converted":
            model = d2s.to_static(model)
        model.eval()

        def infer(model=model):
            with rt.no_grad():
                return model(x)

        model.train()
        opt = rt.optimizer.SGD(0.01, parameters=model.parameters())

        def step(model=model, opt=opt):
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()

        model.eval()
        inference = peak(infer)
        model.train()
        training = peak(step)
        out.append((f"{name}, {mode}", inference, training))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    images = rt.to_tensor(rng.standard_normal((args.batch, 3, 16, 16)).astype("float32"))
    tokens = rt.to_tensor(rng.standard_normal((args.batch, 32, 128)).astype("float32"))
    table = rows("ResNet", ResNet, images) + rows("Transformer encoder (2 layers, d=128)",
                                                     Encoder, tokens)
    print(f"| model (batch {args.batch}) | peak MB, inference | peak MB, training step |")
    print("|---|---:|---:|")
    for name, inference, training in table:
        print(f"| {name} | {inference / 2**20:.2f} | {training / 2**20:.2f} |")
    print()
    fused_rows()


def fused_rows() -> None:
    """Peak MB above the inputs of one bias + residual + LayerNorm call, [2048, 1024]."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fusion_workloads import bias_residual_layernorm
    from runtime.program import native_build

    class M:
        tanh, sqrt = staticmethod(rt.tanh), staticmethod(rt.sqrt)

        @staticmethod
        def mean(x, axis, keepdims):
            return rt.mean(x, axis=axis, keepdim=keepdims)

    def ln(x, b, r):
        return bias_residual_layernorm(x, b, r, M)

    rng = np.random.default_rng(0)
    xa, ra = (rng.standard_normal((2048, 1024)).astype("float32") for _ in range(2))
    ba = rng.standard_normal(1024).astype("float32")
    x, b, r = (rt.to_tensor(a) for a in (xa, ba, ra))
    cells = [("plain NumPy", lambda: bias_residual_layernorm(xa, ba, ra, np))]
    for label, fusion, native in (("converted, unfused", "0", "0"),
                                  ("converted, fused NumPy code", "1", "0"),
                                  ("converted, fused C", "1", "sync")):
        os.environ.update(D2S_FUSION=fusion, D2S_NATIVE=native)
        d2s.transpile._CACHE.pop(ln, None)
        sf = d2s.to_static(ln)
        with rt.no_grad():
            sf(x, b, r)  # compiled (and built) now, under these settings
        entry = sf.program_cache.last_entry
        cells.append((label, lambda entry=entry: entry.run([x, b, r])))
    for var in ("D2S_FUSION", "D2S_NATIVE"):
        os.environ.pop(var, None)
    print("| bias + residual + LayerNorm, [2048, 1024] float32 | peak MB (result: 8 MB) |")
    print("|---|---:|")
    for label, fn in cells:
        with rt.no_grad():
            print(f"| {label} | {peak(fn) / 2**20:.2f} |")
    assert native_build.stats()["native_calls"] > 0


if __name__ == "__main__":
    main()
