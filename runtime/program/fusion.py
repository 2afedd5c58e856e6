"""Fusing chains of elementwise ops and row reductions: evaluate them chunk by chunk of rows
so that the intermediates never exist at full size, on every core.

A run of consecutive fusible ops in a block, on float tensors of one dtype and static shapes
that share their first dimension (the rows), becomes one generated function. Fusible ops:

- elementwise: add, subtract, multiply, divide, maximum, minimum, neg, abs, exp, log, sqrt,
  tanh, sin, cos, square, relu, whose operands either have the rows as first dimension or
  broadcast over them (a bias row, a scalar);
- row reductions: sum, mean, max and min over axes other than the first (LayerNorm's mean and
  variance over the last axis), on float32/float64.

The function walks the rows in chunks (about `CHUNK_ELEMENTS` elements), computes every op of
the chain on a chunk with the NumPy function its kernel calls, into small preallocated
buffers (`out=`; a buffer is reused as soon as its value is dead), and writes at full size
only the values read after the chain. Each op sees the same values in the same order as
unfused, so the results are those of unfused execution (a reduction sums each row as
before). Chunks are split over `threads.num_threads()` threads when the chain has at least
`PARALLEL_ELEMENTS` elements (ufuncs release the GIL).

The unfused code stays the reference: `D2S_FUSION=0` turns fusion off, and
`tests/static/test_fusion.py` compares the two on every program of the test corpus.

Where a C compiler is found, `build` also makes the run's generated C function
(`native.py`, `native_build.py`) and calls it instead of the NumPy code once it is compiled
(a float tolerance from NumPy's results: `test_fusion_native.py`); `D2S_NATIVE=0` keeps the
NumPy code alone.
"""
from __future__ import annotations

import itertools
import linecache
import os
import weakref

import numpy as np

from .. import backend
from . import threads

MIN_ELEMENTS = 1 << 16  # smaller chains: one ufunc call per op is already cheap
CHUNK_ELEMENTS = 1 << 17  # elements per chunk of the widest value (measured: 64K-256K)
PARALLEL_ELEMENTS = 1 << 18  # from this size the chunks are split over the threads

# op type -> (NumPy function name, trailing constant argument or None)
UNARY = {"neg": ("negative", None), "abs": ("absolute", None), "exp": ("exp", None),
         "log": ("log", None), "sqrt": ("sqrt", None), "tanh": ("tanh", None),
         "sin": ("sin", None), "cos": ("cos", None), "square": ("square", None),
         "relu": ("maximum", 0)}
BINARY = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
          "maximum": "maximum", "minimum": "minimum"}
REDUCE = {"sum": "add", "mean": "add", "max": "maximum", "min": "minimum"}
_REDUCE_DTYPES = ("float32", "float64")  # float16's mean accumulates in float32: not fused

_ids = itertools.count()


def enabled() -> bool:
    return mode() is not None


def mode():
    """"cpu" (chunked NumPy), "gpu" (one `ElementwiseKernel` per run, `fusion_gpu.py`) or
    None (off: `D2S_FUSION=0`, or an array module with neither)."""
    if os.environ.get("D2S_FUSION", "1") == "0":
        return None
    xp = backend.XP
    if xp is np:
        return "cpu"
    return "gpu" if hasattr(xp, "ElementwiseKernel") else None


def limits() -> tuple:
    """(MIN_ELEMENTS, CHUNK_ELEMENTS, PARALLEL_ELEMENTS), or with `D2S_FUSION=test` (1, 3, 1):
    every fusible chain fused, in chunks of a few elements, split over the threads, so that
    any test run checks fused execution on its own programs."""
    if os.environ.get("D2S_FUSION") == "test":
        return 1, 3, 1
    return MIN_ELEMENTS, CHUNK_ELEMENTS, PARALLEL_ELEMENTS


def may_fuse(program, how) -> bool:
    """Whether `find_groups` can find anything in `program` (fusion on as `how`, `mode()`'s
    answer): on the CPU a run is fused only when a value of it has at least MIN_ELEMENTS
    elements of a static shape, so a program without one (most small programs) skips the
    search."""
    if how is None:
        return False
    if how != "cpu":
        return True
    least = limits()[0]
    for block in program.blocks:
        for v in block.vars.values():
            shape = v._static_shape
            if shape and -1 not in shape and _size(shape) >= least:
                return True
    return False


class Group:
    """A fusible run: `ops` (indices into the block), the external `inputs` in order, the
    `outputs` (values read after the run, in op order), the number of `rows` and the dtype."""

    def __init__(self, ops, inputs, outputs, rows, dtype, size):
        self.ops = ops
        self.inputs = inputs
        self.outputs = outputs
        self.rows = rows
        self.dtype = dtype
        self.size = size  # elements of the widest value


def find_groups(block, uses_outside, gpu: bool = False) -> list[Group]:
    """The fusible runs of `block`. `uses_outside(name, first, last)` says whether `name` is
    read anywhere but by ops first..last of this block (later ops, sub-blocks, results,
    fetches). With `gpu`: runs of elementwise ops whose results all have one shape (one
    `ElementwiseKernel` computes them all)."""
    groups = []
    run = []
    key = None
    for j, op in enumerate(block.ops):
        k = _fusible_gpu(op, block) if gpu else _fusible(op, block)
        if k is not None and run and k == key and (gpu or _row_local(op, block, run)):
            run.append((j, op))
            continue
        groups.extend(_close(block, run, uses_outside, gpu))
        run, key = ([(j, op)], k) if k is not None else ([], None)
    groups.extend(_close(block, run, uses_outside, gpu))
    return groups


def _fusible_gpu(op, block):
    """(shape, dtype) of an op a GPU run can hold, or None: elementwise, float32/float64,
    finite constants."""
    if op.type in REDUCE or _fusible(op, block) is None:
        return None
    out = block.var(op.outputs[0])
    if out.dtype.name not in _REDUCE_DTYPES or any(
            x.__class__ is float and not np.isfinite(x) for x in op.inputs):
        return None
    return out._static_shape, out.dtype


def _shape(block, name):
    return block.var(name)._static_shape


def _fusible(op, block):
    """(rows, dtype) of a fusible op, or None."""
    if op.blocks or len(op.outputs) != 1:
        return None
    if op.type in REDUCE:
        if not _reduction_ok(op, block):
            return None
    elif op.attrs or (op.type not in UNARY and op.type not in BINARY):
        return None
    out = block.var(op.outputs[0])
    shape = out._static_shape
    if out.kind != "tensor" or not out.dtype.is_floating or not shape or -1 in shape or \
            shape[0] < 2:
        return None
    for x in op.inputs:
        if x.__class__ is str:
            v = block.var(x)
            s = v._static_shape
            if v.kind != "tensor" or v.dtype != out.dtype or s is None or -1 in s:
                return None
            if op.type not in REDUCE and not _broadcasts_to(s, shape):
                return None
        elif x.__class__ not in (int, float) or op.type in REDUCE:
            return None
    return shape[0], out.dtype


def _reduction_ok(op, block) -> bool:
    x = op.inputs[0] if len(op.inputs) == 1 else None
    if x.__class__ is not str or set(op.attrs) - {"axis", "keepdim"}:
        return False
    s = _shape(block, x)
    axis = op.attrs.get("axis")
    if s is None or len(s) < 2 or not axis or block.var(x).dtype.name not in _REDUCE_DTYPES:
        return False
    axes = {a % len(s) for a in axis if -len(s) <= a < len(s)}
    return len(axes) == len(axis) and 0 not in axes and s[0] == _shape(block, op.outputs[0])[0]


def _row_local(op, block, run) -> bool:
    """Whether every operand of `op` made inside `run` has the rows as its first dimension
    in `op`'s output (so a chunk of rows of it is what the op needs)."""
    made = {o.outputs[0] for _, o in run}
    rank = len(_shape(block, op.outputs[0]))
    for x in op.input_names():
        if x in made and op.type not in REDUCE and len(_shape(block, x)) != rank:
            return False
    return True


def _close(block, run, uses_outside, gpu: bool = False) -> list[Group]:
    if not run or (gpu and len(run) < 2):
        return []
    first, last = run[0][0], run[-1][0]
    outputs = [op.outputs[0] for _, op in run[:-1] if uses_outside(op.outputs[0], first, last)]
    outputs.append(run[-1][1].outputs[0])
    size = max(_size(_shape(block, op.outputs[0])) for _, op in run)
    for _, op in run:
        if op.type in REDUCE:
            size = max(size, _size(_shape(block, op.inputs[0])))
    least, _, parallel = limits()
    if not gpu and (size < least or (len(run) == 1 and size < parallel)):
        return []  # (one op on one thread: nothing to gain)
    made, inputs = set(), []
    for _, op in run:
        for x in op.input_names():
            if x not in made and x not in inputs:
                inputs.append(x)
        made.add(op.outputs[0])
    out = block.var(run[0][1].outputs[0])
    return [Group([j for j, _ in run], inputs, outputs, out._static_shape[0], out.dtype, size)]


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _broadcasts_to(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d in (1, t) for d, t in zip(reversed(shape), reversed(target)))


# ---- code generation ------------------------------------------------------------------------

def build(group: Group, block, ident):
    """The function computing `group` (see the module doc): takes the group's inputs, returns
    its outputs (one value, or a tuple when there are several). `ident(name)` gives a
    variable's identifier in generated code."""
    name = f"_fused_{next(_ids)}"
    src, consts, lines = _source(name, group, block, ident)
    filename = f"<d2s fused chain {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"_np": np, "_empty": np.empty, "_run_rows": threads.run_rows}
    ns.update(consts)
    exec(compile(src, filename, "exec"), ns)  # noqa: S102  (our own generated code)
    fn = ns[name]
    _LINES[filename] = {n: ("op", block.ops[j], block) for n, j in lines.items()}
    weakref.finalize(fn, _forget, filename)
    from . import native_build  # (it imports this module)
    holder = native_build.prepare(group, block)
    if holder is None:
        return fn
    return _with_native(fn, native_build.caller(holder, group.size >= limits()[2]))


def _with_native(fn, native_fn):
    """The run's C function (`native.py`) where it is ready and raised no floating-point
    exception NumPy would report, else the NumPy code `fn` (the reference)."""

    def fused(*args):
        out = native_fn(*args)
        return fn(*args) if out is None else out

    fused.numpy_code = fn
    return fused


_LINES: dict = {}  # file name of a live fused function -> {line: ("op", op, block)}


def _forget(filename: str) -> None:
    _LINES.pop(filename, None)
    linecache.cache.pop(filename, None)


def op_at(filename: str, line: int):
    """("op", op, block) of the op a line of a fused function runs, or None: how the executor
    names the failing op of a fused chain."""
    got = _LINES.get(filename)
    return got.get(line) if got is not None else None


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


def _row_operand(block, op, x, rows) -> bool:
    """Whether tensor operand `x` of `op` is read a chunk of rows at a time (else whole)."""
    s, out = _shape(block, x), _shape(block, op.outputs[0])
    return op.type in REDUCE or (len(s) == len(out) and s[0] == rows)


def merged_axes(ops, block, rows) -> int:
    """How many leading axes the chunks can cut across as if they were one (a [2, 512, 1024]
    LayerNorm is then chunked as [1024, 1024] rows): the most that every row value shares,
    that no reduction reduces and that no operand broadcasts over. 1: the first axis only."""
    limits_ = []
    prefix = None
    for op in ops:
        out = _shape(block, op.outputs[0])
        values = [out]
        for x in op.input_names():
            if _row_operand(block, op, x, rows):
                values.append(_shape(block, x))
            else:  # broadcast over the rows: it may only cover axes after the merged ones
                limits_.append(len(out) - len(_shape(block, x)))
        if op.type in REDUCE:
            rank = len(_shape(block, op.inputs[0]))
            limits_.append(min(a % rank for a in op.attrs["axis"]))
        for v in values:
            if prefix is None:
                prefix = v
            n = 0
            while n < min(len(v), len(prefix)) and v[n] == prefix[n]:
                n += 1
            limits_.append(n)
    return max(1, min(limits_))


def _source(name, group, block, ident):
    ops = [block.ops[j] for j in group.ops]
    k_merge = merged_axes(ops, block, group.rows)
    original = _shape

    def shape_of(block, name, merged=k_merge > 1):  # row values with merged axes
        s = original(block, name)
        if merged and name in row_values:
            return (_size(s[:k_merge]),) + tuple(s[k_merge:])
        return s

    row_values = {o.outputs[0] for o in ops}
    for o in ops:
        row_values.update(x for x in o.input_names() if _row_operand(block, o, x, group.rows))
    rows, dt = shape_of(block, ops[0].outputs[0])[0], group.dtype.np
    widest = max(_size(shape_of(block, o.outputs[0])[1:]) for o in ops)
    for o in ops:
        if o.type in REDUCE:
            widest = max(widest, _size(shape_of(block, o.inputs[0])[1:]))
    _, chunk, parallel = limits()
    step = max(1, chunk // max(widest, 1))
    consts: dict = {}

    def const(v):
        c = f"c{len(consts)}"
        consts[c] = dt.type(v)
        return c

    last_use = {}
    for k, op in enumerate(ops):
        for x in op.input_names():
            last_use[x] = k
    outputs = set(group.outputs)
    outs = {n: f"o{i}" for i, n in enumerate(group.outputs)}
    bufs = _Buffers()
    where: dict = {}  # value made in the group -> its chunk expression
    sliced: dict = {}  # input read a chunk of rows at a time -> its chunk variable
    body, body_ops = [], []  # a line of the chunk loop, the index of the op it runs
    for k, op in enumerate(ops):
        res = op.outputs[0]
        out_shape = shape_of(block, res)
        dying = [x for x in dict.fromkeys(op.input_names())
                 if x in where and x not in outputs and last_use[x] == k]

        def arg(x, op=op, out_shape=out_shape):
            if x.__class__ is not str:
                return const(x)
            if x in where:
                return where[x]
            if x in row_values:
                if x not in sliced:
                    sliced[x] = f"a{len(sliced)}"
                return sliced[x]
            return ident(x)  # broadcast over the rows: whole

        args = [arg(x) for x in op.inputs]
        if res in outputs:
            body.append(f"{outs[res]}c = {outs[res]}[s:e]")
            body_ops.append(None)
            dest = f"{outs[res]}c"
        else:
            reuse = [x for x in dying if op.type not in REDUCE and
                     shape_of(block, x) == out_shape]
            if reuse:
                b = int(where[reuse[0]][1:])
                dying.remove(reuse[0])
            else:
                b = bufs.take(tuple(out_shape[1:]))
            dest = f"b{b}"
        for x in dying:
            bufs.give(int(where[x][1:]))
        if op.type in UNARY:
            fn, c = UNARY[op.type]
            call = f"_np.{fn}({args[0]}{', ' + const(c) if c is not None else ''}, out={dest})"
        elif op.type in BINARY:
            call = f"_np.{BINARY[op.type]}({', '.join(args)}, out={dest})"
        else:
            rank = len(original(block, op.inputs[0]))
            axes = tuple(sorted(a % rank for a in op.attrs["axis"]))
            keep = bool(op.attrs.get("keepdim", False))
            shifted = tuple(a - (k_merge - 1) for a in axes)
            call = f"_np.{REDUCE[op.type]}.reduce({args[0]}, axis={shifted!r}, " \
                   f"keepdims={keep}, out={dest})"
            if op.type == "mean":
                # as np.mean does it: the sum, then divided by the count as an intp
                n = _size(original(block, op.inputs[0])[a] for a in axes)
                consts[f"n{len(consts)}"] = np.intp(n)
                call += f"; _np.true_divide({dest}, n{len(consts) - 1}, out={dest}, " \
                        "casting='unsafe')"
        body.append(call)
        body_ops.append(group.ops[k])
        where[res] = dest
    params = ", ".join(ident(n) for n in group.inputs)
    lines = [f"def {name}({params}):"]
    if k_merge > 1:  # the leading axes as one: views of contiguous inputs, else copies
        for x in sliced:
            lines.append(f"    {ident(x)} = {ident(x)}.reshape({tuple(shape_of(block, x))!r})")
    for n in group.outputs:
        lines.append(f"    {outs[n]} = _empty({tuple(shape_of(block, n))!r}, _dtype)")
    lines.append("    def part(lo, hi):")
    lines.append("        full = _spare.pop() if _spare else _new()")
    for i in range(len(bufs.made)):
        lines.append(f"        f{i} = full[{i}]")
    lines.append(f"        for s in range(lo, hi, {step}):")
    lines.append(f"            e = s + {step} if s + {step} < hi else hi")
    if bufs.made:
        lines.append("            n = e - s")
        lines.append("            " + ", ".join(f"b{i}" for i in range(len(bufs.made))) +
                     " = " + ", ".join(f"f{i}[:n]" for i in range(len(bufs.made))))
    if sliced:
        lines.append("            " + ", ".join(sliced.values()) + " = " +
                     ", ".join(f"{ident(x)}[s:e]" for x in sliced))
    line_ops = {}
    for ln, j in zip(body, body_ops):
        lines.append("            " + ln)
        if j is not None:
            line_ops[len(lines)] = j
    lines.append("        _spare.append(full)")
    lines.append(f"    _run_rows(part, {rows}, {step}, {group.size >= parallel})")
    rets = [outs[n] if k_merge == 1 else
            f"{outs[n]}.reshape({tuple(original(block, n))!r})" for n in group.outputs]
    lines.append("    return " + (rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ",)"))
    made = list(bufs.made)
    consts.update(_dtype=dt, _spare=[],
                  _new=lambda: [np.empty((step,) + rs, dt) for rs in made])
    return "\n".join(lines) + "\n", consts, line_ops
