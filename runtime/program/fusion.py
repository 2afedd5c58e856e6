"""Fusing chains of elementwise ops and row reductions: evaluate them chunk by chunk of rows
so that the intermediates never exist at full size, on every core.

A run of consecutive fusible ops in a block, on float tensors of one dtype and static shapes
that share their first dimension (the rows), becomes one generated function. The rows may be
unknown (-1, a saved model's batch) where every other dimension is known: the function then
takes the row count from its inputs at run time, and the program calls it only where the
row inputs agree on it and the run is big enough (`run_time_guard`), else runs the ops
unfused. Fusible ops:

- elementwise: add, subtract, multiply, divide, maximum, minimum, neg, abs, exp, log, sqrt,
  tanh, sin, cos, square, relu, erf, sigmoid, gelu (exact or tanh form) and gelu_grad, whose operands
  either have the rows as first dimension or broadcast over them (a bias row, a scalar);
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

This module finds the runs. A run's NumPy code is planned in `fusion_chunks.py`, written by
`fusion_emit.py` and compiled by `fused_function.py`, which, where a C compiler is found, also
makes the run's generated C function (`native.py`, `native_build.py`) and calls it instead of
the NumPy code once it is compiled (a float tolerance from NumPy's results:
`test_fusion_native.py`); `D2S_NATIVE=0` keeps the NumPy code alone.
"""
from __future__ import annotations

import linecache
import os
import weakref

import numpy as np

from .. import backend

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
# ops no single ufunc computes: the chunked code calls the op's own NumPy kernel
# (`fused_kernels.py`), the C code d2s's own functions (`native_math.py`), the GPU kernel
# a device function each (`fusion_gpu.py`).
# "gelu_tanh" is gelu with approximate=True (`fused_type`).
KERNEL_UNARY = ("erf", "sigmoid", "gelu", "gelu_tanh")
# the same for ops of two operands: GELU's gradient dx from (x, dy), one loop in a backward
KERNEL_BINARY = ("gelu_grad", "gelu_tanh_grad")
KERNEL_OPS = KERNEL_UNARY + KERNEL_BINARY
_REDUCE_DTYPES = ("float32", "float64")  # float16's mean accumulates in float32: not fused

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
            if shape and -1 not in shape[1:] and (shape[0] == -1 or size_of(shape) >= least):
                return True
    return False


class Group:
    """A fusible run: `ops` (indices into the block), the external `inputs` in order, the
    `outputs` (values read after the run, in op order), the number of `rows` (-1: known at
    run time only) and the dtype. `width`: elements per row of the widest value; `least`:
    the fewest elements (rows x width) for which the run is worth fusing; `row_inputs`: the
    inputs read a chunk of rows at a time."""

    def __init__(self, ops, inputs, outputs, rows, dtype, width, least, row_inputs):
        self.ops = ops
        self.inputs = inputs
        self.outputs = outputs
        self.rows = rows
        self.dtype = dtype
        self.width = width
        self.least = least
        self.row_inputs = row_inputs

    def parallel_rows(self) -> int:
        """The fewest rows from which the chunks are split over the threads."""
        return -(-limits()[2] // self.width)


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
    if out._static_shape[0] == -1 or out.dtype.name not in _REDUCE_DTYPES or any(
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
    elif not _elementwise_ok(op):
        return None
    out = block.var(op.outputs[0])
    shape = out._static_shape
    if out.kind != "tensor" or not out.dtype.is_floating or not shape or -1 in shape[1:] or \
            shape[0] in (0, 1):
        return None
    for x in op.inputs:
        if x.__class__ is str:
            v = block.var(x)
            s = v._static_shape
            if v.kind != "tensor" or v.dtype != out.dtype or s is None or -1 in s[1:] or \
                    (s and s[0] == -1 and (shape[0] != -1 or len(s) != len(shape))):
                return None  # (unknown rows only as the output's rows)
            if op.type not in REDUCE and not _broadcasts_to(s, shape):
                return None
        elif x.__class__ not in (int, float) or op.type in REDUCE:
            return None
    return shape[0], out.dtype


def fused_type(op) -> str:
    """The name of an op in the fused code: GELU's tanh form (approximate=True) is
    "gelu_tanh", its gradient "gelu_tanh_grad"."""
    if op.type in _GELUS and op.attrs.get("approximate"):
        return _GELUS[op.type]
    return op.type


_GELUS = {"gelu": "gelu_tanh", "gelu_grad": "gelu_tanh_grad"}


def _elementwise_ok(op) -> bool:
    """An elementwise op the fused code computes, with no attribute it does not read."""
    if op.type in _GELUS:
        return set(op.attrs) <= {"approximate"}
    return not op.attrs and (op.type in UNARY or op.type in BINARY or op.type in KERNEL_OPS)


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
    width = max(size_of(_shape(block, op.outputs[0])[1:]) for _, op in run)
    for _, op in run:
        if op.type in REDUCE:
            width = max(width, size_of(_shape(block, op.inputs[0])[1:]))
    least, _, parallel = limits()
    if len(run) == 1:
        least = parallel  # (one op on one thread: nothing to gain)
    out = block.var(run[0][1].outputs[0])
    rows = out._static_shape[0]
    if not gpu and rows != -1 and rows * width < least:
        return []
    made, inputs, row_inputs = set(), [], []
    for _, op in run:
        for x in op.input_names():
            if x not in made and x not in inputs:
                inputs.append(x)
            if x not in made and x not in row_inputs and row_operand(block, op, x, rows):
                row_inputs.append(x)
        made.add(op.outputs[0])
    if rows == -1 and not row_inputs:
        return []  # (nothing to read the row count from)
    return [Group([j for j, _ in run], inputs, outputs, rows, out.dtype, width, least,
                  row_inputs)]


def run_time_guard(group, ident) -> str | None:
    """For a run with unknown rows, the Python condition under which the fused function may
    run: every row input has the same row count (unfused, a row count of 1 would broadcast)
    and the run has at least `group.least` elements. None for known rows (always fused)."""
    if group.rows != -1:
        return None
    first, *others = [f"{ident(x)}.shape[0]" for x in group.row_inputs]
    return " and ".join([f"{first} * {group.width} >= {group.least}"] +
                        [f"{x} == {first}" for x in others])


def size_of(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _broadcasts_to(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d in (1, t) for d, t in zip(reversed(shape), reversed(target)))


# ---- where the lines of a fused function come from -------------------------------------------

_LINES: dict = {}  # file name of a live fused function -> {line: ("op", op, block)}


def remember_lines(fn, filename: str, lines: dict) -> None:
    """Note which op each line of the fused function `fn` (compiled from `filename`, whose
    text is in `linecache`) runs, for as long as `fn` lives (`op_at`)."""
    _LINES[filename] = lines
    weakref.finalize(fn, _forget, filename)


def _forget(filename: str) -> None:
    _LINES.pop(filename, None)
    linecache.cache.pop(filename, None)


def op_at(filename: str, line: int):
    """("op", op, block) of the op a line of a fused function runs, or None: how the executor
    names the failing op of a fused chain."""
    got = _LINES.get(filename)
    return got.get(line) if got is not None else None


def row_operand(block, op, x, rows) -> bool:
    """Whether tensor operand `x` of `op` is read a chunk of rows at a time (else whole)."""
    s, out = _shape(block, x), _shape(block, op.outputs[0])
    return op.type in REDUCE or (len(s) == len(out) and s[0] == rows)


def merged_axes(ops, block, rows) -> int:
    """How many leading axes the chunks can cut across as if they were one (a [2, 512, 1024]
    LayerNorm is then chunked as [1024, 1024] rows): the most that every row value shares,
    that no reduction reduces and that no operand broadcasts over. 1: the first axis only
    (always, where the rows are unknown)."""
    if rows == -1:
        return 1
    limits_ = []
    prefix = None
    for op in ops:
        out = _shape(block, op.outputs[0])
        values = [out]
        for x in op.input_names():
            if row_operand(block, op, x, rows):
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
