"""The convolution kernels against an older copy of themselves, in one process: the three conv2d
kernels alone on the ResNet basic block's shapes, and the block's whole training step.

    git show main:runtime/ops/nn_conv.py > /tmp/old_nn_conv.py
    python benchmarks/conv_step.py --against /tmp/old_nn_conv.py [--repeat 30]

The block is `examples/models/resnet.py`'s BasicBlock (two 3x3 convs 16->16 with BatchNorm,
identity shortcut) on [16, 16, 32, 32]; a step is forward, `backward`, SGD `step` and
`clear_grad`, eager and as one `d2s.to_static` program. The file given by `--against` is
executed as a module of its own (its ops are not registered) and its `_conv2d_kernel`,
`_grad_input_kernel` and `_grad_filter_kernel` are installed in place of the current ones
before each timed call of the "old" side; a program compiles the kernels installed when it is
traced, so each side has its own program. Calls alternate old/new and the median of `repeat`
wall-clock times per side is reported with the ratio new / old (below 1: the current kernels
are faster), so load from other processes falls on both sides alike. Before timing, each pair
of results is compared. BLAS runs on one thread when threadpoolctl is installed.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import d2s
import runtime as rt
from examples.models.resnet import BasicBlock
from runtime.ops import nn_conv, registry

_KERNELS = {"conv2d": "_conv2d_kernel", "conv2d_grad_input": "_grad_input_kernel",
            "conv2d_grad_filter": "_grad_filter_kernel"}


def load_kernels(path: str) -> dict:
    """{op name: kernel} of the nn_conv.py at `path`, run with a scratch op registry."""
    spec = importlib.util.spec_from_file_location("runtime.ops._conv_under_test", path)
    module = importlib.util.module_from_spec(spec)
    saved = registry.OPS
    registry.OPS = {}
    try:
        spec.loader.exec_module(module)
    finally:
        registry.OPS = saved
    return {op: getattr(module, name) for op, name in _KERNELS.items()}


def current_kernels() -> dict:
    return {op: getattr(nn_conv, name) for op, name in _KERNELS.items()}


def install(kernels: dict) -> None:
    for op, kernel in kernels.items():
        registry.OPS[op].kernel = kernel


def _median_pair(calls: dict, repeat: int) -> dict:
    """Median seconds of each side's call, the sides alternating `repeat` times."""
    times = {side: [] for side in calls}
    for _ in range(repeat):
        for side, (kernels, fn) in calls.items():
            install(kernels)
            start = time.perf_counter()
            fn()
            times[side].append(time.perf_counter() - start)
    return {side: statistics.median(ts) for side, ts in times.items()}


def _report(name: str, medians: dict) -> None:
    old, new = medians["old"], medians["new"]
    print(f"| {name} | {old * 1e3:.2f} | {new * 1e3:.2f} | {new / old:.2f} |")


def kernel_rows(sides: dict, repeat: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 16, 32, 32)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    g = rng.standard_normal((16, 16, 32, 32)).astype(np.float32)
    attrs = {"stride": [1, 1], "padding": [1, 1, 1, 1], "dilation": [1, 1], "groups": 1}
    args = {"conv2d": (x, w), "conv2d_grad_input": (g, w, x),
            "conv2d_grad_filter": (x, g, w)}
    for op, ins in args.items():
        outs = [kernels[op](np, *ins, **attrs) for kernels in sides.values()]
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-3)
        calls = {side: (kernels, lambda k=kernels[op], ins=ins: k(np, *ins, **attrs))
                 for side, kernels in sides.items()}
        _report(f"`{op}` kernel", _median_pair(calls, repeat))


def _block_step(seed_state, static: bool):
    block = BasicBlock(16, 16)
    block.set_state_dict(seed_state)
    opt = rt.optimizer.SGD(learning_rate=0.01, parameters=block.parameters())

    def step(x):
        loss = block(x).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return block, (d2s.to_static(step) if static else step)


def step_rows(sides: dict, repeat: int) -> None:
    x = rt.to_tensor(np.random.default_rng(1).standard_normal((16, 16, 32, 32)).astype(
        np.float32))
    rt.seed(0)
    state = BasicBlock(16, 16).state_dict()
    for static in (False, True):
        calls, blocks = {}, {}
        for side, kernels in sides.items():
            install(kernels)
            blocks[side], fn = _block_step(state, static)
            fn(x)  # traces and compiles the static program with this side's kernels
            calls[side] = (kernels, lambda fn=fn: fn(x))
        install(sides["new"])
        medians = _median_pair(calls, repeat)
        old, new = (blocks[s].conv1.weight.numpy() for s in ("old", "new"))
        np.testing.assert_allclose(new, old, rtol=1e-3, atol=1e-4)  # same steps, same weights
        _report(f"block step, {'to_static' if static else 'eager'}", medians)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", required=True, help="an older runtime/ops/nn_conv.py")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    sides = {"old": load_kernels(args.against), "new": current_kernels()}
    limit = contextlib.nullcontext()
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(1)
    try:
        with limit:
            print("| [16, 16, 32, 32], 3x3, 16->16 | old ms | new ms | new / old |")
            print("|---|---:|---:|---:|")
            kernel_rows(sides, args.repeat)
            step_rows(sides, args.repeat)
    finally:
        install(sides["new"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
