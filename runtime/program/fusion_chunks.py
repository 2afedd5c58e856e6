"""The plan of a fused run's NumPy code (`fusion.py`): which NumPy call computes each op on a
chunk of rows, into which buffer, and how the chunks are walked. `fusion_emit.py` writes the
Python text from it; `fused_function.py` compiles it.

The code it plans walks the rows in chunks of `step` rows (split over the threads): each op
is one NumPy call with `out=` a chunk buffer (reused as soon as its value is dead) or the
chunk of an output array. With `merged` leading axes, the row values are seen as
[rows, ...] (a [2, 512, 1024] LayerNorm as [1024, 1024]): inputs are reshaped on entry and
outputs back on return.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fusion import (
    BINARY,
    KERNEL_OPS,
    REDUCE,
    UNARY,
    fused_type,
    limits,
    merged_axes,
    row_operand,
    size_of,
)


@dataclass
class ChunkCall:
    """One op on a chunk: `func(*args, out=dest)` (`func` a NumPy function, or one of
    `fused_kernels.py`'s where it starts with `_kernel_`; a reduction: `func.reduce(args[0],
    axis=axes, keepdims=keepdims, out=dest)`, then divided by const `count` for a mean).
    `output`: the output array whose chunk `dest` is (None: a chunk buffer). `op`: the op's
    index in its block."""

    op: int
    func: str
    args: list
    dest: str
    output: str | None = None
    axes: tuple | None = None
    keepdims: bool = False
    count: str | None = None


@dataclass
class ChunkPlan:
    """The fused function `name(*params)`: `outputs` [(array, shape while computing, shape
    returned or None when the same)], `reshaped` inputs [(ident, shape)] on entry, chunk
    `buffers` (their row shapes), `sliced` inputs [(chunk name, ident)] read a chunk at a
    time, `calls` in order, `step` rows per chunk of `rows` (-1: the row count of the first
    sliced input, at run time), split over the threads from `parallel_rows` rows, and the
    constants the code names (`consts`)."""

    name: str
    params: list
    outputs: list
    reshaped: list
    buffers: list
    sliced: list
    calls: list
    step: int
    rows: int
    parallel_rows: int
    dtype: np.dtype
    consts: dict


class _Buffers:
    """Chunk buffers by row shape: which are free, and how many of each the chain needs."""

    def __init__(self):
        self.free: dict = {}  # row shape -> [buffer index]
        self.made: list = []  # buffer index -> row shape

    def take(self, row_shape) -> int:
        free = self.free.get(row_shape)
        if free:
            return free.pop()
        self.made.append(row_shape)
        return len(self.made) - 1

    def give(self, i: int) -> None:
        self.free.setdefault(self.made[i], []).append(i)


class _Shapes:
    """Shapes of the run's values as the chunked code sees them (row values with the merged
    leading axes as one), and as the program has them (`original`)."""

    def __init__(self, ops, group, block):
        self.block = block
        self.merged = merged_axes(ops, block, group.rows)
        self.row_values = {o.outputs[0] for o in ops}
        for o in ops:
            self.row_values.update(x for x in o.input_names()
                                   if row_operand(block, o, x, group.rows))

    def original(self, name) -> tuple:
        return self.block.var(name)._static_shape

    def __call__(self, name) -> tuple:
        s = self.original(name)
        k = self.merged
        if k > 1 and name in self.row_values:
            return (size_of(s[:k]),) + tuple(s[k:])
        return s


def plan(name: str, group, block, ident) -> ChunkPlan:
    """The `ChunkPlan` of `group` (a `fusion.Group` of `block`); `ident(name)` is a value's
    identifier in the generated code."""
    ops = [block.ops[j] for j in group.ops]
    shape = _Shapes(ops, group, block)
    dt = group.dtype.np
    widest = max(size_of(shape(o.outputs[0])[1:]) for o in ops)
    for o in ops:
        if o.type in REDUCE:
            widest = max(widest, size_of(shape(o.inputs[0])[1:]))
    chunk = limits()[1]
    step = max(1, chunk // max(widest, 1))
    consts: dict = {}
    bufs = _Buffers()
    outs = {n: f"o{i}" for i, n in enumerate(group.outputs)}
    sliced: dict = {}  # input read a chunk of rows at a time -> its chunk variable
    calls = _calls(ops, group, shape, ident, outs, bufs, sliced, consts)
    k = shape.merged
    return ChunkPlan(
        name, [ident(n) for n in group.inputs],
        [(outs[n], tuple(shape(n)), tuple(shape.original(n)) if k > 1 else None)
         for n in group.outputs],
        [(ident(x), tuple(shape(x))) for x in sliced] if k > 1 else [],
        list(bufs.made), [(v, ident(x)) for x, v in sliced.items()], calls, step,
        shape(ops[0].outputs[0])[0], group.parallel_rows(), dt, consts)


def _calls(ops, group, shape, ident, outs, bufs, sliced, consts) -> list:
    """The `ChunkCall` of each op: its operands' chunk names, its destination (an output's
    chunk, a dead operand's buffer of the same shape, or a free buffer)."""
    dt = group.dtype.np

    def const(v):
        c = f"c{len(consts)}"
        consts[c] = dt.type(v)
        return c

    last_use = {}
    for k, op in enumerate(ops):
        for x in op.input_names():
            last_use[x] = k
    where: dict = {}  # value made in the group -> its chunk expression
    calls = []
    for k, op in enumerate(ops):
        res = op.outputs[0]
        dying = [x for x in dict.fromkeys(op.input_names())
                 if x in where and x not in outs and last_use[x] == k]

        def arg(x):
            if x.__class__ is not str:
                return const(x)
            if x in where:
                return where[x]
            if x in shape.row_values:
                return sliced.setdefault(x, f"a{len(sliced)}")
            return ident(x)  # broadcast over the rows: whole

        args = [arg(x) for x in op.inputs]
        output = outs.get(res)
        if output is not None:
            dest = f"{output}c"
        else:
            reuse = [x for x in dying if op.type not in REDUCE and shape(x) == shape(res)]
            if reuse:
                b = int(where[reuse[0]][1:])
                dying.remove(reuse[0])
            else:
                b = bufs.take(tuple(shape(res)[1:]))
            dest = f"b{b}"
        for x in dying:
            bufs.give(int(where[x][1:]))
        calls.append(_call(op, group.ops[k], args, dest, output, shape, const, consts))
        where[res] = dest
    return calls


def _call(op, index, args, dest, output, shape, const, consts) -> ChunkCall:
    if fused_type(op) in KERNEL_OPS:
        return ChunkCall(index, f"_kernel_{fused_type(op)}", args, dest, output)
    if op.type in UNARY:
        fn, c = UNARY[op.type]
        return ChunkCall(index, fn, args + ([const(c)] if c is not None else []), dest, output)
    if op.type in BINARY:
        return ChunkCall(index, BINARY[op.type], args, dest, output)
    rank = len(shape.original(op.inputs[0]))
    axes = tuple(sorted(a % rank for a in op.attrs["axis"]))
    call = ChunkCall(index, REDUCE[op.type], args, dest, output,
                     tuple(a - (shape.merged - 1) for a in axes),
                     bool(op.attrs.get("keepdim", False)))
    if op.type == "mean":
        # as np.mean does it: the sum, then divided by the count as an intp
        call.count = f"n{len(consts)}"
        consts[call.count] = np.intp(size_of(shape.original(op.inputs[0])[a] for a in axes))
    return call
