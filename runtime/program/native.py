"""Fused runs as generated C: one loop nest per run, compiled once (`native_build.py`). This
module plans it (`plan`: whether the run fits, then its `LoopNest`, `loop_nest.py`);
`native_emit.py` writes the C text from the plan.

A run that `fusion.py` fuses (elementwise ops and row reductions on float32/float64 values
that share their rows) is also written as a C function when its values fit one simple
layout: seen with the chunked code's merged leading axes as [R, ...], every value of the run
is either *wide* (R rows of the same W elements) or *per row* (one element per row: a
reduction's result, a [R, 1] input), and every operand that broadcasts over the rows is a
scalar or exactly one row of W elements (a bias). Reductions must reduce every axis but the
rows. Other runs keep the NumPy chunked code alone.

The function computes rows lo..hi (the thread pool of `threads.py` gives each thread a
share; ctypes releases the GIL). For each row it runs one loop over the W elements per
*segment*: a segment holds the elementwise ops and the reductions that do not need a
reduction's result of the same segment; values that live only inside a segment are C locals,
values read by a later segment go to a row buffer (or are read back from the output array
they were written to). Per-row values are computed between the loops. With no reduction, no
per-row value and no bias row, rows lo..hi are one flat loop.

Each op computes what its NumPy ufunc computes: + - * / and sqrt are correctly rounded in
both (the C is compiled with `-ffp-contract=off`, so no multiply-add is contracted);
`maximum`/`minimum`/`relu` propagate NaN as NumPy does; exp, log, tanh, sin and cos come
from the C library (glibc's vector versions where available; float32 tanh is d2s's own,
`native_math.py`) and may differ from NumPy's by a few units in the last place; sums and means accumulate in double (NumPy: pairwise in the
value's dtype), so they can differ by a rounding of the result. The function returns the
floating-point exception flags it raised; when one that `np.geterr()` does not ignore is
set, the caller runs the NumPy code instead, so warnings and `np.errstate` errors are
NumPy's own.
"""
from __future__ import annotations

import copy

import numpy as np

from . import fusion
from .fusion import size_of
from .loop_nest import Loop, LoopNest, Operand, Step
from .native_emit import C_BINARY, C_REDUCE, C_UNARY, c_source
from .native_math import OWN_FUNCTIONS

assert set(C_UNARY) == set(fusion.UNARY) and set(C_BINARY) == set(fusion.BINARY)
assert {(t, T) for t in fusion.KERNEL_OPS for T in ("float", "double")} <= set(OWN_FUNCTIONS)
assert set(C_REDUCE) == set(fusion.REDUCE)


class Plan:
    """The C source of a run (`source`), the function's name, and how to call it: the
    run's inputs in order, its outputs with their shapes, the row count (-1: that of input
    `row_input`, at run time), dtype, and the inputs to `expand` to a row before the call
    (`LoopNest.expand`)."""

    def __init__(self, source, name, group, rows, dtype, out_shapes, expand, nest=None,
                 vector_math=True):
        self.source = source
        self.name = name
        self.inputs = list(group.inputs)
        self.outputs = list(group.outputs)
        self.rows = rows
        self.dtype = dtype
        self.out_shapes = out_shapes
        self.row_input = self.inputs.index(group.row_inputs[0]) if group.row_inputs else None
        self.expand = expand
        self.nest, self.vector_math = nest, vector_math


def plan(group, block, vector_math: bool = True):
    """The `Plan` of `group`, or None when its values do not fit the layout above."""
    nest = plan_loops(group, block)
    if nest is None:
        return None
    out_shapes = [tuple(block.var(n)._static_shape) for n in group.outputs]
    return Plan(c_source(nest, vector_math), nest.name, group, nest.rows,
                np.dtype(group.dtype.np), out_shapes, nest.expand, nest, vector_math)


def scalar_variant(plan: Plan, scalars) -> Plan:
    """`plan` with its inputs at positions `scalars` read as one element (`[0]`) wherever
    the run reads them: for an input that arrives as a broadcast of one value (stride 0 on
    every axis: the gradient of a `sum`), which the C call then reads without expanding it.
    The inputs `plan` expands to a row before the call are not among `scalars`."""
    def operand(x):
        if x.place == "input" and x.index in scalars:
            return Operand("input", x.index, "scalar")
        return x

    def step(s):
        return Step(s.type, s.result, [operand(x) for x in s.operands], s.out, s.tmp)

    nest = plan.nest
    body = [Loop([step(s) for s in item.steps]) if isinstance(item, Loop) else step(item)
            for item in nest.body]
    variant = LoopNest(nest.name, nest.ctype, nest.inputs, nest.outputs, nest.rows,
                       nest.width, nest.flat, nest.tmps, body, dict(nest.expand))
    out = copy.copy(plan)
    out.source, out.nest = c_source(variant, plan.vector_math), variant
    return out


def plan_loops(group, block) -> LoopNest | None:
    """The `LoopNest` of `group` (a `fusion.Group` of `block`), or None when its values do not
    fit the layout above."""
    if group.dtype.name not in ("float32", "float64"):
        return None
    ops = [block.ops[j] for j in group.ops]
    k = fusion.merged_axes(ops, block, group.rows)

    def shape(n):
        return tuple(block.var(n)._static_shape)

    row_values = {o.outputs[0] for o in ops}
    for o in ops:
        row_values.update(x for x in o.input_names()
                          if fusion.row_operand(block, o, x, group.rows))
    first = shape(ops[0].outputs[0])
    R = size_of(first[:k])
    inner = {}
    for n in row_values:
        s = shape(n)
        if len(s) < k or size_of(s[:k]) != R:
            return None
        inner[n] = s[k:]
    W = max(size_of(s) for s in inner.values())
    if W == 1 and any(o.type in fusion.REDUCE for o in ops):
        return None  # (a reduction's result would be laid out as a wide value, never stored)
    wide_shape = next(s for s in inner.values() if size_of(s) == W)
    level = {}
    for n, s in inner.items():
        if size_of(s) == W and (s == wide_shape or W == 1):
            level[n] = "wide"
        elif size_of(s) == 1:
            level[n] = "row"
        else:
            return None
    bcast = {}  # operand broadcast over the rows -> "scalar" or "wide"
    for o in ops:
        if o.type in fusion.REDUCE:
            x = o.inputs[0]  # it must reduce every axis but the rows
            rank = len(shape(x))
            axes = [a % rank for a in o.attrs["axis"]]
            if level.get(x) != "wide" or min(axes) < k or \
                    size_of([shape(x)[a] for a in axes]) != W:
                return None
            continue
        for x in o.input_names():
            if x in row_values:
                continue
            s = shape(x)
            if size_of(s) == 1:
                bcast[x] = "scalar"
            elif level[o.outputs[0]] == "wide" and \
                    (1,) * (len(wide_shape) - len(s)) + s == tuple(wide_shape):
                bcast[x] = "wide"
            elif level[o.outputs[0]] == "wide" and _broadcasts_over_row(s, wide_shape):
                bcast[x] = "expand"
            else:
                return None
    flat = all(v == "wide" for v in level.values()) and \
        not any(o.type in fusion.REDUCE for o in ops) and \
        all(v == "scalar" for v in bcast.values())
    ctype = "float" if group.dtype.name == "float32" else "double"
    nest = _loop_nest(ops, group, level, bcast, R, W, ctype, flat)
    nest.expand = {group.inputs.index(x): tuple(wide_shape) for x, how in bcast.items()
                   if how == "expand"}
    return nest


def _broadcasts_over_row(shape, row) -> bool:
    """Whether an operand of `shape` broadcasts to one whole row of `row`'s shape, its
    leading axes beyond the row's (over the rows) all 1."""
    extra = len(shape) - len(row)
    if extra > 0 and any(d != 1 for d in shape[:extra]):
        return False
    shape = shape[max(extra, 0):]
    return all(d in (1, t) for d, t in zip(reversed(shape), reversed(row)))


def _loop_nest(ops, group, level, bcast, R, W, ctype, flat) -> LoopNest:
    """The `LoopNest` of the run's `ops`, given each value's `level` ("wide" or "row") and the
    layout of the operands broadcast over the rows (`bcast`: "scalar" or "wide")."""
    order, seg_of, made_in = _segments(ops, level)
    outs = {n: i for i, n in enumerate(group.outputs)}
    # wide values read by a later segment than the one that made them: read back from the
    # output they were written to, or saved in a row buffer
    tmps = []
    for o in ops:
        for x in o.input_names():
            if x in made_in and level.get(x) == "wide" and made_in[x] != seg_of[id(o)] \
                    and x not in outs and x not in tmps:
                tmps.append(x)
    inputs = {n: i for i, n in enumerate(group.inputs)}
    local = {o.outputs[0]: n for n, o in enumerate(ops)}

    def operand(x, seg) -> Operand:
        if x.__class__ is not str:
            return Operand("const", x)
        if x in inputs and x not in local:
            how = ("scalar" if bcast[x] == "scalar" else "bcast") if x in bcast else level[x]
            return Operand("input", inputs[x], how)
        if level[x] == "wide" and made_in[x] != seg:
            return Operand("output", outs[x]) if x in outs else Operand("tmp", tmps.index(x))
        return Operand("local", local[x])

    def step(o) -> Step:
        res, seg = o.outputs[0], seg_of[id(o)]
        return Step(fusion.fused_type(o), local[res], [operand(x, seg) for x in o.inputs],
                    outs.get(res), tmps.index(res) if res in tmps else None)

    body = [Loop([step(o) for o in ops if seg_of[id(o)] == item]) if kind == "loop"
            else step(item) for kind, item in order]
    return LoopNest("d2s_fused", ctype, len(inputs), len(outs), R, W, flat, len(tmps), body)


def _segments(ops, level):
    """Which loop each op runs in: `order` ("loop", segment) or ("row", op) in emission
    order, `seg_of` (id(op) -> segment, None for a per-row value computed between the loops)
    and `made_in` (value -> the segment that made it). A segment holds the elementwise ops and
    the reductions that do not need a reduction result of the same segment."""
    seg_of: dict = {}
    made_in: dict = {}
    pending: set = set()  # reduction results of the open segment
    nseg = 0
    order = []
    open_seg = None
    for o in ops:
        res = o.outputs[0]
        needs_row = [x for x in o.input_names() if x in pending]
        if o.type in fusion.REDUCE or level[res] == "wide":
            if open_seg is None or needs_row:
                open_seg = nseg
                nseg += 1
                order.append(("loop", open_seg))
                pending = set()
            seg_of[id(o)] = open_seg
            made_in[res] = open_seg
            if o.type in fusion.REDUCE:
                pending.add(res)
        else:  # a per-row value
            if needs_row:
                open_seg = None
                pending = set()
                order.append(("row", o))
            elif open_seg is not None:
                order.insert(order.index(("loop", open_seg)), ("row", o))
            else:
                order.append(("row", o))
            seg_of[id(o)] = None
    return order, seg_of, made_in
