"""Small tensor loops on the GPU as one generated CUDA kernel (`cupy.RawKernel`).

On the CPU a tensor `while` (with the `if` and elementwise ops before it: `native_region.py`)
whose values are small runs as one C call (`native_loops.py`). On CuPy the same program would
launch one kernel per op per iteration and read the condition on the host each time; this
module writes the loop's `WhilePlan` (`loop_plan.py`) as one kernel of ONE thread block
instead, launched once per call:

    extern "C" __global__ void d2s_loop_3(char *state, char *scratch, int *paused,
                                          const float *a0, float *o0, const int64_t m0,
                                          const int resume) {
        const int64_t t = threadIdx.x, nt = blockDim.x;
        __shared__ float b0[64];                  // each step's result
        ...
        for (;;) {
            for (int64_t j = t; j < 1; j += nt) b1[j] = (s1[0] < n0[0]);
            __syncthreads();
            if (!b1[0]) break;                    // every thread reads the same value
            for (int64_t j = t; j < 64; j += nt) b2[j] = (s0[j] * ((float)0.5));
            __syncthreads();
            ...
        }
    }

Each thread owns elements t, t + blockDim.x, ... of every step; a barrier after each step
makes its result visible to all threads before the next reads it (an operand read modulo its
size, a matmul row, the one-element condition). The condition reduces nothing across blocks:
with one block the barrier is the grid-wide decision. That is why it is for small values
only: `native_loops.MAX_ELEMENTS` (4096) elements per value, at most `MAX_THREADS` threads,
the buffers in shared memory while they fit (`SHARED_BYTES`; then in device scratch memory).
A larger loop keeps the per-op path (a kernel per op, the condition read per iteration),
where a grid of blocks per op does better.

Values: the steps are `native_loops_emit`'s own C lines (the same operations in the same
types), with a thread's share of the elements, compiled without contracting a multiply and
an add (`--fmad=false`, as the C is); a mean in the prologue is summed by thread 0 in
NumPy's pairwise order (`d2s_sum_<T>`: NumPy's bits; CuPy's `mean` sums in a tree). The
device's exp, log, tanh, sin, cos differ from glibc's by a few units in the last place.

The carried values live in a device buffer the caller keeps, so a call that stops after
`trips_per_call` iterations (it sets `paused`) is resumed by the next launch: a loop that
never ends stays interruptible from Python. One host synchronisation per call (reading
`paused`), against one per iteration for the per-op path. CuPy reports no floating-point
flags, so unlike the C path nothing falls back to the Python loop for them.

The kernel text is also valid C++ under a small host shim (`tests/cuda_host.py`: `__global__`
empty, a thread per `threadIdx.x`, `__syncthreads()` a barrier), which is how the tests run
the very text a GPU would run, against the NumPy path.
"""
from __future__ import annotations

import os
import re
import threading

import numpy as np

from .. import backend
from .loop_plan import Branch, Copy, MatmulStep, Reduce, Ref, WhilePlan
from .native_loops_emit import (
    CTYPES,
    helpers,
    literal,
    matmul_operands,
    ref_name,
    step_line,
)

MAX_THREADS = 256  # one block: enough threads for 4096 elements in 16 strides each
SHARED_BYTES = 48 * 1024  # static shared memory of one block on every CUDA GPU
_THREAD_LOOP = "for (int64_t j = t; j < {n}; j += nt)"
_SYNC = "__syncthreads();"
_HEAD = ("#ifdef __CUDACC_RTC__  /* NVRTC has no <stdint.h>, <math.h> */",
         "typedef long long int64_t; typedef unsigned long long uint64_t;",
         "typedef int int32_t; typedef unsigned int uint32_t;",
         "#define INFINITY __int_as_float(0x7f800000)",
         "#define NAN __int_as_float(0x7fffffff)",
         "#else", "#include <math.h>", "#include <stdint.h>", "#endif")
# A C99 hex float (`native_emit._const`): written in decimal, which every C++ dialect reads
# (the shortest repr that reads back as the same double)
_HEX_FLOAT = re.compile(r"0x[0-9a-f]+\.[0-9a-f]*p[+-]\d+")


def enabled() -> bool:
    """Whether loops run as CUDA kernels: the array module has `RawKernel` (CuPy) and native
    code is not turned off (`D2S_NATIVE=0`)."""
    env = os.environ.get("D2S_NATIVE", "1").strip().lower()
    return hasattr(backend.XP, "RawKernel") and env not in ("0", "off", "no", "false")


def buffers(plan: WhilePlan) -> tuple:
    """(the declarations of the steps' buffers, the bytes of device scratch memory they
    take): in the block's shared memory in order while they fit `SHARED_BYTES`, the others
    in the scratch buffer the caller keeps (8-byte aligned)."""
    lines, shared, scratch = [], 0, 0
    for k, b in enumerate(plan.buffers):
        T, size = CTYPES[b.dtype], np.dtype(b.dtype).itemsize * b.size
        if shared + size <= SHARED_BYTES:
            lines.append(f"    __shared__ {T} b{k}[{b.size}];")
            shared += size
        else:
            lines.append(f"    {T} *__restrict__ b{k} = ({T} *)(scratch + {scratch});")
            scratch += -(-size // 8) * 8
    return lines, scratch


def threads(plan: WhilePlan) -> int:
    """The block's threads: the largest step's elements, in whole warps, at most
    `MAX_THREADS`."""
    sizes = [c.size for c in plan.carried] + [b.size for b in plan.buffers]
    return min(MAX_THREADS, max(32, -(-max(sizes, default=1) // 32) * 32))


def kernel_source(plan: WhilePlan) -> str:
    """The CUDA C++ of `plan`'s kernel `plan.name` (see the module doc). Its parameters: the
    carried values' buffer, the scratch buffer (`buffers`), the `paused` flag, the array
    arguments, the outputs, the int64 loop bounds and `resume` (1: continue a paused loop)."""
    lines = ["/* generated by d2s (runtime/program/cuda_loops.py) from one tensor loop */",
             *_HEAD, *helpers(plan, "static __device__")]
    params = ["char *__restrict__ state", "char *__restrict__ scratch",
              "int *__restrict__ paused"]
    params += [f"const {CTYPES[dt]} *__restrict__ a{k}" for k, (_, dt, _) in
               enumerate(plan.arrays)]
    params += [f"{CTYPES[o.dtype]} *__restrict__ o{k}" for k, o in enumerate(plan.outputs)]
    params += [f"const int64_t m{k}" for k in range(len(plan.ints))] + ["const int resume"]
    lines.append(f'extern "C" __global__ void {plan.name}({", ".join(params)}) {{')
    lines += ["    const int64_t t = threadIdx.x, nt = blockDim.x;", "    int64_t trips = 0;",
              "    if (t == 0) paused[0] = 0;"]
    lines += [f"    const int64_t n{k}[1] = {{m{k}}};" for k in range(len(plan.ints))]
    for k, c in enumerate(plan.carried):
        T = CTYPES[c.dtype]
        lines.append(f"    {T} *__restrict__ s{k} = ({T} *)(state + {c.offset});")
    lines += buffers(plan)[0]
    lines.append("    if (!resume) {")
    lines += _steps(plan.pre_steps, "        ")
    lines += ["        " + _init(k, c) for k, c in enumerate(plan.carried)]
    lines += ["    }", f"    {_SYNC}", "    for (;;) {"]
    lines += _steps(plan.cond_steps, "        ")
    lines.append(f"        if (!{ref_name(plan.cond)}[0]) break;")
    lines += _steps(plan.body_steps, "        ")
    lines += _steps(plan.copies, "        ")
    if not plan.body_steps and not plan.copies:  # (no barrier since the condition was read:
        lines.append(f"        {_SYNC}")  # one before the next iteration writes it again)
    lines += [f"        if (++trips == {plan.trips_per_call}) {{",
              "            if (t == 0) paused[0] = 1;", "            return;", "        }",
              "    }"]
    for k, o in enumerate(plan.outputs):
        lines.append(f"    {_THREAD_LOOP.format(n=max(1, int(np.prod(o.shape))))} "
                     f"o{k}[j] = s{o.state}[j];")
    text = "\n".join(lines + ["}"]) + "\n"
    return _HEX_FLOAT.sub(lambda m: repr(float.fromhex(m.group())), text)


def _init(k: int, c) -> str:
    """Carried value `k`'s first value, a thread's share."""
    loop = _THREAD_LOOP.format(n=c.size)
    if isinstance(c.init, Ref):
        return f"{loop} s{k}[j] = {ref_name(c.init)}[j];"
    return f"{loop} s{k}[j] = {literal(c.init, c.dtype)};"


def _steps(steps, ind: str) -> list:
    """Each step (`LoopStep`, `MatmulStep`, `Reduce`, `Branch`, `Copy`) a thread's share of
    it, then a barrier: the next step may read any element of its result."""
    lines = []
    for s in steps:
        if isinstance(s, Branch):  # (its predicate is behind a barrier: every thread agrees)
            lines.append(f"{ind}if ({ref_name(s.pred)}[0]) {{")
            lines += _steps(s.then_steps + s.then_copies, ind + "    ")
            lines.append(f"{ind}}} else {{")
            lines += _steps(s.else_steps + s.else_copies, ind + "    ")
            lines.append(f"{ind}}}")
            continue
        lines += [ind + _one(s), ind + _SYNC]
    return lines


def _one(s) -> str:
    if isinstance(s, Reduce):  # (thread 0 sums in NumPy's order: NumPy's bits)
        T = CTYPES[s.dtype]
        return (f"if (t == 0) b{s.result}[0] = ({T})((double)(({T})0 + d2s_sum_{T}("
                f"{ref_name(s.operand)}, {s.size})) / (double){s.size});")
    if isinstance(s, MatmulStep):
        a, b = matmul_operands(s)
        T = CTYPES[s.dtype]
        return (f"for (int64_t e = t; e < {s.m * s.n}; e += nt) {{ const int64_t i = e / {s.n}, "
                f"j = e % {s.n}; {T} acc = 0; for (int64_t kk = 0; kk < {s.k}; kk++) "
                f"acc += {a} * {b}; b{s.result}[e] = acc; }}")
    if isinstance(s, Copy):
        if isinstance(s.source, Ref):
            return (f"{_THREAD_LOOP.format(n=s.size)} {ref_name(s.target)}[j] = "
                    f"{ref_name(s.source)}[j];")
        return (f"{_THREAD_LOOP.format(n=s.size)} {ref_name(s.target)}[j] = "
                f"{literal(s.source, s.dtype)};")
    return step_line(s, _THREAD_LOOP).lstrip()


def caller(plan: WhilePlan, stats: dict):
    """`run(*arrays, *ints)`: the loop's outputs (a tuple of new device arrays) computed by
    one launch of its kernel (more when it pauses), or None when an argument is not the
    device array the program declares or another thread is running it (the per-op loop runs
    instead). `stats['native_calls']` counts the calls."""
    xp = backend.XP
    source = kernel_source(plan)
    kernel = xp.RawKernel(source, plan.name, options=("--fmad=false",))  # (as C: no FMA)
    block = (threads(plan),)
    state = xp.zeros(max(8, plan.state_bytes), xp.uint8)
    scratch = xp.zeros(max(8, buffers(plan)[1]), xp.uint8)
    paused = xp.zeros(1, xp.int32)
    declared = [(np.dtype(dt), tuple(shape)) for _, dt, shape in plan.arrays]
    outputs = [(tuple(o.shape), np.dtype(o.dtype)) for o in plan.outputs]
    n_arrays = len(declared)
    lock = threading.Lock()

    def run(*args):
        arrays = args[:n_arrays]
        for a, (dt, shape) in zip(arrays, declared, strict=True):
            if a.__class__ is not xp.ndarray or a.dtype != dt or a.shape != shape:
                return None
        if not lock.acquire(False):
            return None
        try:
            outs = [xp.empty(shape, dt) for shape, dt in outputs]
            head = (state, scratch, paused, *[xp.ascontiguousarray(a) for a in arrays], *outs,
                    *[np.int64(n) for n in args[n_arrays:]])
            kernel((1,), block, (*head, np.int32(0)))
            while int(paused.get()[0]):  # (one host synchronisation per call)
                kernel((1,), block, (*head, np.int32(1)))
            stats["native_calls"] += 1
            return tuple(outs)
        finally:
            lock.release()

    run.kernel_source = source
    return run
