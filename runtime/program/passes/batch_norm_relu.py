"""Selecting the fused BatchNorm + ReLU op: a `batch_norm` whose output only a `relu` reads
becomes one `batch_norm_relu` (`runtime/ops/nn_batch_norm_relu.py`), which runs as one pass
of generated C on the CPU and one CUDA kernel on the GPU, forward and backward:

    %y, %m, %v = batch_norm(%x, %rm, %rv, %w, %b) {training=True}
    %r = relu(%y)
        =>
    %r, %m, %v = batch_norm_relu(%x, %rm, %rv, %w, %b) {training=True}

Conv -> BatchNorm -> ReLU is how a ResNet block is written (MobileNet's relu6 is not fused). Nothing changes
unless the BatchNorm is channels-first (`NC...`: the native kernels' layout), its output is
read by that `relu` alone (no other op, sub-block, block result or value in `keep`), and the
`relu` is in the same block. The statistics outputs stay as they were (the running-mean
updates read them).

A converted function's training program is fused before its gradients are built
(`d2s/running.py`), so its backward holds one `batch_norm_relu_grad` per pair; the program a
call without gradients runs is fused before it is compiled. The traced program itself, what
`d2s.save` writes and what `fold_batch_norm` folds, keeps its `batch_norm` and `relu`.
`D2S_FUSION=0` fuses nothing here either (the unfused program is the reference).
"""
from __future__ import annotations

import os
from collections import Counter

from ..ir import Program
from .common import start


def _read_counts(program: Program) -> Counter:
    reads: Counter = Counter()
    for block in program.blocks:
        for op in block.ops:
            reads.update(op.input_names())
        reads.update(r for r in block.results if r.__class__ is str)
    return reads


def _pairs(program: Program, keep) -> list:
    """(block, index of the batch_norm, index of its relu) of each pair that may fuse."""
    if os.environ.get("D2S_FUSION", "1") == "0":
        return []
    candidates = []  # (block, j, k, the batch_norm's output): the program's reads are
    # counted only where there are any (most programs have no BatchNorm)
    for block in program.blocks:
        norms = [j for j, op in enumerate(block.ops) if op.type == "batch_norm"
                 and op.attrs.get("data_format", "NCHW").startswith("NC")]
        if not norms:
            continue
        relu_of = {op.inputs[0]: j for j, op in enumerate(block.ops)
                   if op.type == "relu" and len(op.inputs) == 1 and not op.attrs}
        for j in norms:
            y = block.ops[j].outputs[0]
            k = relu_of.get(y)
            if k is not None and k > j and y not in keep:
                candidates.append((block, j, k, y))
    if not candidates:
        return []
    reads = _read_counts(program)
    return [(block, j, k) for block, j, k, y in candidates if reads[y] == 1]


def fuse_batch_norm_relu_in_place(program: Program, keep=()) -> int:
    """Fuse every such pair of `program` (a copy the caller owns); the number fused."""
    pairs = _pairs(program, set(keep))
    for block, j, k in sorted(pairs, key=lambda p: (p[0].idx, -p[2])):
        bn, relu = block.ops[j], block.ops[k]
        bn.type = "batch_norm_relu"
        bn.outputs = [relu.outputs[0], *bn.outputs[1:]]
        del block.ops[k]
    if pairs:
        program.version += 1
    return len(pairs)


def fuse_batch_norm_relu(program: Program, keep=()) -> Program:
    """`program` with its BatchNorm + ReLU pairs fused (a new program), or `program` itself
    where it has none."""
    if not _pairs(program, set(keep)):
        return program
    new = start(program, "fuse_batch_norm_relu")
    fuse_batch_norm_relu_in_place(new, keep)
    return new
