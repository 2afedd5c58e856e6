"""The function a fused run becomes (`fusion.py` finds the runs): its NumPy code, planned by
`fusion_chunks.py` and written by `fusion_emit.py`, compiled here; where a C compiler is
found, its C function (`native.py`, `native_build.py`) is called instead once it is ready.
"""
from __future__ import annotations

import itertools
import linecache

import numpy as np

from . import fused_kernels, fusion_chunks, threads
from .fusion import remember_lines
from .fusion_emit import numpy_source

_ids = itertools.count()


def build(group, block, ident):
    """The function computing `group` (see `fusion.py`): takes the group's inputs, returns
    its outputs (one value, or a tuple when there are several). `ident(name)` gives a
    variable's identifier in generated code."""
    plan = fusion_chunks.plan(f"_fused_{next(_ids)}", group, block, ident)
    fn, filename, lines = compile_numpy(plan)
    remember_lines(fn, filename, {n: ("op", block.ops[j], block) for n, j in lines.items()})
    # (imported here: it loads the compiler machinery, subprocess and ctypes, which only a
    # program with a fused run on the CPU needs)
    from . import native_build, native_run
    holder = native_build.prepare(group, block)
    if holder is None:
        return fn
    return _with_native(fn, native_run.caller(holder, group.parallel_rows()))


def compile_numpy(plan) -> tuple:
    """`(fn, filename, {line: op index})`: the NumPy function of `plan` (a `ChunkPlan`), the
    file name its text is kept under in `linecache`, and the op each line computes."""
    src, lines = numpy_source(plan)
    filename = f"<d2s fused chain {plan.name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    dt, step, buffers = plan.dtype, plan.step, plan.buffers
    ns = {"_np": np, "_empty": np.empty, "_run_rows": threads.run_rows,
          **fused_kernels.NAMESPACE}
    ns.update(plan.consts)
    ns.update(_dtype=dt, _spare=[], _new=lambda: [np.empty((step,) + rs, dt) for rs in buffers])
    exec(compile(src, filename, "exec"), ns)  # noqa: S102  (our own generated code)
    return ns[plan.name], filename, lines


def _with_native(fn, native_fn):
    """The run's C function (`native.py`) where it is ready and raised no floating-point
    exception NumPy would report, else the NumPy code `fn` (the reference)."""

    def fused(*args):
        out = native_fn(*args)
        return fn(*args) if out is None else out

    fused.numpy_code = fn
    return fused
