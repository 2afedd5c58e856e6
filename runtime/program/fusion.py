"""Fusing chains of elementwise ops: evaluate them chunk by chunk so that the intermediates
never exist at full size.

A run of consecutive elementwise ops in a block (add, multiply, tanh, ...) whose
intermediate results are read only inside the run, on float tensors of one dtype and a static
shape of at least `MIN_ELEMENTS`, becomes one generated function. It walks the output in
blocks of rows (about `CHUNK_ELEMENTS` elements each), computes every op of the chain on that
block with NumPy's ufuncs into small preallocated buffers (`out=`), and writes only the last
result at full size. Each ufunc is the one the op's kernel calls, on the same values, so the
results are identical to unfused execution. Large chains split their rows over two threads
(ufuncs release the GIL). The unfused code stays the reference: `D2S_FUSION=0` turns fusion
off, and `tests/static/test_fusion.py` compares the two on every program of the test corpus.
"""
from __future__ import annotations

import os
import threading

from .. import backend

MIN_ELEMENTS = 1 << 16  # smaller outputs: one ufunc call each is already cheap
CHUNK_ELEMENTS = 1 << 15  # elements per block: fits the buffers of a chain in L2 cache
PARALLEL_ELEMENTS = 1 << 20  # from this size the rows are split over two threads

# op type -> (NumPy ufunc name, trailing constant argument or None)
UNARY = {"neg": ("negative", None), "abs": ("absolute", None), "exp": ("exp", None),
         "log": ("log", None), "sqrt": ("sqrt", None), "tanh": ("tanh", None),
         "sin": ("sin", None), "cos": ("cos", None), "square": ("square", None),
         "relu": ("maximum", 0)}
BINARY = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
          "maximum": "maximum", "minimum": "minimum"}


def enabled() -> bool:
    return os.environ.get("D2S_FUSION", "1") != "0" and backend.XP.__name__ == "numpy"


class Group:
    """A fusible run: `ops` (indices into the block), the external inputs in order, the
    output name, its shape and dtype."""

    def __init__(self, ops, inputs, output, shape, dtype):
        self.ops = ops
        self.inputs = inputs
        self.output = output
        self.shape = shape
        self.dtype = dtype


def find_groups(block, uses_outside) -> list[Group]:
    """The fusible runs of `block`. `uses_outside(name, first, last)` says whether `name` is
    read anywhere but by ops first..last of this block (later ops, sub-blocks, results,
    fetches)."""
    groups = []
    run = []
    for j, op in enumerate(block.ops):
        if _fusible(op, block):
            if run and not _same_kind(block, run[-1], op):
                groups.extend(_close(block, run, uses_outside))
                run = []
            run.append((j, op))
        else:
            groups.extend(_close(block, run, uses_outside))
            run = []
    groups.extend(_close(block, run, uses_outside))
    return groups


def _fusible(op, block) -> bool:
    if op.attrs or op.blocks or len(op.outputs) != 1:
        return False
    if op.type not in UNARY and op.type not in BINARY:
        return False
    out = block.var(op.outputs[0])
    shape = out._static_shape
    if out.kind != "tensor" or not out.dtype.is_floating or shape is None or -1 in shape:
        return False
    if not shape or _size(shape) < MIN_ELEMENTS:
        return False
    for x in op.inputs:
        if x.__class__ is str:
            v = block.var(x)
            if v.kind != "tensor" or v.dtype != out.dtype or v._static_shape is None or \
                    -1 in v._static_shape or not _broadcasts_to(v._static_shape, shape):
                return False
        elif x.__class__ not in (int, float):
            return False
    return True


def _same_kind(block, prev, op) -> bool:
    a, b = block.var(prev[1].outputs[0]), block.var(op.outputs[0])
    return a._static_shape == b._static_shape and a.dtype == b.dtype


def _close(block, run, uses_outside) -> list[Group]:
    """The groups in a run: the longest parts, from the left, whose intermediates are read
    only inside the part."""
    groups = []
    start = 0
    while start < len(run):
        end = start
        for e in range(len(run) - 1, start, -1):
            first, last = run[start][0], run[e][0]
            if not any(uses_outside(run[k][1].outputs[0], first, last)
                       for k in range(start, e)):
                end = e
                break
        if end > start:
            groups.append(_group(block, run[start:end + 1]))
        start = end + 1
    return groups


def _group(block, part) -> Group:
    made = set()
    inputs = []
    for _, op in part:
        for x in op.inputs:
            if x.__class__ is str and x not in made and x not in inputs:
                inputs.append(x)
        made.add(op.outputs[0])
    out = block.var(part[-1][1].outputs[0])
    return Group([j for j, _ in part], inputs, out.name, out._static_shape, out.dtype)


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

def function_source(name: str, group: Group, block, ident) -> str:
    """The source of `def name(inputs...)` computing the group's output (see the module doc).
    `ident(var)` gives a variable's identifier in generated code."""
    shape = group.shape
    rows, rest = shape[0], _size(shape[1:])
    step = max(1, CHUNK_ELEMENTS // max(rest, 1))
    params = [ident(n) for n in group.inputs]
    sliced = {n for n in group.inputs
              if len(block.var(n)._static_shape) == len(shape) and
              block.var(n)._static_shape[0] == rows and rows > 1}
    np_dtype = group.dtype.np
    lines = [f"def {name}({', '.join(params)}):",
             f"    out = _empty({shape!r}, _dt({str(np_dtype)!r}))",
             f"    def part(lo, hi):"]
    ops = [block.ops[j] for j in group.ops]
    temps = {}
    for k, op in enumerate(ops[:-1]):
        temps[op.outputs[0]] = f"b{k}"
        lines.append(f"        b{k}full = _empty(({step},) + {tuple(shape[1:])!r}, "
                     f"_dt({str(np_dtype)!r}))")
    lines.append(f"        for s in range(lo, hi, {step}):")
    lines.append(f"            e = min(s + {step}, hi)")
    lines.append("            n = e - s")
    for k, op in enumerate(ops[:-1]):
        lines.append(f"            b{k} = b{k}full[:n]")

    def arg(x):
        if x.__class__ is str:
            if x in temps:
                return temps[x]
            return f"{ident(x)}[s:e]" if x in sliced else ident(x)
        return f"_dt({str(np_dtype)!r}).type({x!r})"

    for k, op in enumerate(ops):
        dest = "out[s:e]" if k == len(ops) - 1 else temps[op.outputs[0]]
        if op.type in UNARY:
            fn, const = UNARY[op.type]
            args = [arg(op.inputs[0])] + ([arg(const)] if const is not None else [])
        else:
            fn = BINARY[op.type]
            args = [arg(x) for x in op.inputs]
        lines.append(f"            _np.{fn}({', '.join(args)}, out={dest})")
    size = _size(shape)
    lines.append("    if " + f"{size} >= {PARALLEL_ELEMENTS} and {rows} >= 2:")
    lines.append(f"        _both(part, {rows})")
    lines.append("    else:")
    lines.append(f"        part(0, {rows})")
    lines.append("    return out")
    return "\n".join(lines)


_POOL = []
_POOL_LOCK = threading.Lock()


def run_on_both(part, rows: int) -> None:
    """`part(lo, hi)` over rows 0..rows, split between this thread and a helper thread."""
    if not _POOL:
        with _POOL_LOCK:
            if not _POOL:
                from concurrent.futures import ThreadPoolExecutor
                _POOL.append(ThreadPoolExecutor(1, thread_name_prefix="d2s-fusion"))
    mid = rows // 2
    other = _POOL[0].submit(part, mid, rows)
    part(0, mid)
    other.result()


def namespace() -> dict:
    import numpy as np
    return {"_np": np, "_empty": np.empty, "_dt": np.dtype, "_both": run_on_both}
