"""Fused runs as generated C: one loop nest per run, compiled once (`native_build.py`).

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
from the C library (glibc's vector versions where available) and may differ from NumPy's by a
few units in the last place; sums and means accumulate in double (NumPy: pairwise in the
value's dtype), so they can differ by a rounding of the result. The function returns the
floating-point exception flags it raised; when one that `np.geterr()` does not ignore is
set, the caller runs the NumPy code instead, so warnings and `np.errstate` errors are
NumPy's own.
"""
from __future__ import annotations

import numpy as np

from . import fusion

C_UNARY = {"neg": "(-{0})", "abs": "{F}abs{f}({0})", "exp": "exp{f}({0})",
           "log": "log{f}({0})", "sqrt": "sqrt{f}({0})", "tanh": "tanh{f}({0})",
           "sin": "sin{f}({0})", "cos": "cos{f}({0})", "square": "({0} * {0})",
           "relu": "d2s_max({0}, ({T})0)"}
C_BINARY = {"add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
            "divide": "({0} / {1})", "maximum": "d2s_max({0}, {1})",
            "minimum": "d2s_min({0}, {1})"}
VECTOR_FUNCTIONS = ("exp", "log", "tanh", "sin", "cos")  # glibc's libmvec has these

assert set(C_UNARY) == set(fusion.UNARY) and set(C_BINARY) == set(fusion.BINARY)


class Plan:
    """The C source of a run (`source`), the function's name, and how to call it: the
    run's inputs in order, its outputs with their shapes, the row count and dtype."""

    def __init__(self, source, name, group, rows, dtype, out_shapes):
        self.source = source
        self.name = name
        self.inputs = list(group.inputs)
        self.outputs = list(group.outputs)
        self.rows = rows
        self.dtype = dtype
        self.out_shapes = out_shapes


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def plan(group, block, vector_math: bool = True):
    """The `Plan` of `group`, or None when its values do not fit the layout above."""
    if group.dtype.name not in ("float32", "float64"):
        return None
    ops = [block.ops[j] for j in group.ops]
    k = fusion.merged_axes(ops, block, group.rows)

    def shape(n):
        return tuple(block.var(n)._static_shape)

    row_values = {o.outputs[0] for o in ops}
    for o in ops:
        row_values.update(x for x in o.input_names()
                          if fusion._row_operand(block, o, x, group.rows))
    first = shape(ops[0].outputs[0])
    R = _size(first[:k])
    inner = {}
    for n in row_values:
        s = shape(n)
        if len(s) < k or _size(s[:k]) != R:
            return None
        inner[n] = s[k:]
    W = max(_size(s) for s in inner.values())
    wide_shape = next(s for s in inner.values() if _size(s) == W)
    level = {}
    for n, s in inner.items():
        if _size(s) == W and (s == wide_shape or W == 1):
            level[n] = "wide"
        elif _size(s) == 1:
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
                    _size([shape(x)[a] for a in axes]) != W:
                return None
            continue
        for x in o.input_names():
            if x in row_values:
                continue
            s = shape(x)
            if _size(s) == 1:
                bcast[x] = "scalar"
            elif level[o.outputs[0]] == "wide" and \
                    (1,) * (len(wide_shape) - len(s)) + s == tuple(wide_shape):
                bcast[x] = "wide"
            else:
                return None
    dt = np.dtype(group.dtype.np)
    T, f = ("float", "f") if dt == np.float32 else ("double", "")
    name = "d2s_fused"
    flat = all(v == "wide" for v in level.values()) and \
        not any(o.type in fusion.REDUCE for o in ops) and \
        all(v == "scalar" for v in bcast.values())
    src = _emit(ops, group, shape, level, bcast, W, T, f, name, flat, vector_math)
    out_shapes = [shape(n) for n in group.outputs]
    return Plan(src, name, group, R, dt, out_shapes)


def _const(x, T) -> str:
    v = float(np.float32(x)) if T == "float" else float(x)
    if not np.isfinite(v):
        return "(INFINITY)" if v > 0 else "(-INFINITY)" if v < 0 else "(NAN)"
    return f"(({T}){v.hex()})"


def _emit(ops, group, shape, level, bcast, W, T, f, name, flat, vector_math) -> str:
    params = {n: f"i{i}" for i, n in enumerate(group.inputs)}
    outs = {n: f"o{i}" for i, n in enumerate(group.outputs)}
    # which loop segment each op runs in (None: a per-row value, between the loops)
    seg_of: dict = {}
    made_in: dict = {}  # value -> segment that made it (wide) / after which it exists (row)
    pending: set = set()  # reduction results of the open segment
    nseg = 0
    order = []  # ("loop", seg) or ("row", op), in emission order
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
    # wide values read by a later segment than the one that made them
    stored, tmps = {}, []
    for o in ops:
        s = seg_of[id(o)]
        for x in o.input_names():
            if x in made_in and level.get(x) == "wide" and made_in[x] != s:
                if x in outs:
                    stored[x] = f"{outs[x]}[base + j]"
                elif x not in stored:
                    stored[x] = f"tmp{len(tmps)}[j]"
                    tmps.append(x)
    local = {o.outputs[0]: f"v{n}" for n, o in enumerate(ops)}

    def ref(x, seg):
        if x.__class__ is not str:
            return _const(x, T)
        if x in params and x not in local:
            p = params[x]
            if x in bcast:
                return f"{p}[0]" if bcast[x] == "scalar" else f"{p}[j]"
            return f"{p}[base + j]" if level[x] == "wide" else f"{p}[r]"
        if level[x] == "wide" and made_in[x] != seg:
            return stored[x]
        return local[x]

    def expr(o, seg):
        args = [ref(x, seg) for x in o.inputs]
        table = C_UNARY if o.type in C_UNARY else C_BINARY
        return table[o.type].format(*args, T=T, f=f, F="f")

    lines = [f"int {name}(char **p, int64_t lo, int64_t hi) {{"]
    for n, p in params.items():
        lines.append(f"    const {T} *restrict {p} = (const {T} *)p[{list(params).index(n)}];")
    for i, (n, o) in enumerate(outs.items()):
        lines.append(f"    {T} *restrict {o} = ({T} *)p[{len(params) + i}];")
    lines.append("    feclearexcept(FE_ALL_EXCEPT);")
    if tmps:
        lines.append(f"    {T} *restrict tmp0 = ({T} *)malloc(sizeof({T}) * {W} * {len(tmps)});")
        lines.append("    if (!tmp0) return -1;")
        for t in range(1, len(tmps)):
            lines.append(f"    {T} *restrict tmp{t} = tmp0 + {W * t};")
    if flat:
        lines.append("    const int64_t base = 0; const int64_t r = 0; (void)r;")
        loop_lo, loop_hi, ind = f"lo * {W}", f"hi * {W}", "    "
    else:
        lines.append("    for (int64_t r = lo; r < hi; r++) {")
        lines.append(f"        const int64_t base = r * {W};")
        loop_lo, loop_hi, ind = "0", str(W), "        "
    for kind, item in order:
        if kind == "row":
            o = item
            lines.append(f"{ind}{T} {local[o.outputs[0]]} = {expr(o, None)};")
            if o.outputs[0] in outs:
                lines.append(f"{ind}{outs[o.outputs[0]]}[r] = {local[o.outputs[0]]};")
            continue
        seg = item
        seg_ops = [o for o in ops if seg_of[id(o)] == seg]
        reds = [o for o in seg_ops if o.type in fusion.REDUCE]
        sums = [o for o in reds if o.type in ("sum", "mean")]
        for o in reds:
            acc = f"acc{local[o.outputs[0]]}"
            if o.type in ("sum", "mean"):
                lines.append(f"{ind}double {acc} = 0.0;")
            else:
                lines.append(f"{ind}{T} {acc} = {'-' if o.type == 'max' else ''}INFINITY;")
        if len(sums) == len(reds):  # (max/min propagate NaN: no simd reduction)
            red = f" reduction(+:{', '.join('acc' + local[o.outputs[0]] for o in sums)})" \
                if sums else ""
            lines.append(f"{ind}#pragma omp simd{red}")
        lines.append(f"{ind}for (int64_t j = {loop_lo}; j < {loop_hi}; j++) {{")
        for o in seg_ops:
            res = o.outputs[0]
            v = local[res]
            if o.type in fusion.REDUCE:
                x = ref(o.inputs[0], seg)
                acc = f"acc{v}"
                if o.type in ("sum", "mean"):
                    lines.append(f"{ind}    {acc} += (double){x};")
                else:
                    fn = "d2s_max" if o.type == "max" else "d2s_min"
                    lines.append(f"{ind}    {acc} = {fn}({acc}, {x});")
                continue
            lines.append(f"{ind}    {T} {v} = {expr(o, seg)};")
            if res in outs:
                lines.append(f"{ind}    {outs[res]}[base + j] = {v};")
            if res in stored and not stored[res].startswith("o"):
                lines.append(f"{ind}    {stored[res]} = {v};")
        lines.append(f"{ind}}}")
        for o in reds:
            v = local[o.outputs[0]]
            if o.type == "mean":
                lines.append(f"{ind}{T} {v} = ({T})(acc{v} / (double){W});")
            else:
                lines.append(f"{ind}{T} {v} = ({T})acc{v};")
            if o.outputs[0] in outs:
                lines.append(f"{ind}{outs[o.outputs[0]]}[r] = {v};")
    if not flat:
        lines.append("    }")
    if tmps:
        lines.append("    free(tmp0);")
    lines.append("    int fl = fetestexcept(FE_ALL_EXCEPT);")
    lines.append("    return ((fl & FE_INVALID) ? 1 : 0) | ((fl & FE_DIVBYZERO) ? 2 : 0) | "
                 "((fl & FE_OVERFLOW) ? 4 : 0) | ((fl & FE_UNDERFLOW) ? 8 : 0);")
    lines.append("}")
    head = [
        "/* generated by d2s (runtime/program/native.py) from one fused run */",
        "#include <math.h>", "#include <fenv.h>", "#include <stdint.h>", "#include <stdlib.h>",
    ]
    if vector_math:
        used = {o.type for o in ops if o.type in VECTOR_FUNCTIONS}
        head += [f'__attribute__((simd("notinbranch"))) {T} {fn}{f}({T});' for fn in
                 sorted(used)]
    head += [
        f"static inline {T} d2s_max({T} a, {T} b) {{ return (a > b || a != a) ? a : b; }}",
        f"static inline {T} d2s_min({T} a, {T} b) {{ return (a < b || a != a) ? a : b; }}",
    ]
    return "\n".join(head + lines) + "\n"
