"""Generated CUDA run on the CPU: the very kernel text d2s hands CuPy, compiled by the host
C++ compiler under a small shim and called on `fake_cupy` arrays (tests only).

The shim makes CUDA C++ host C++: `__global__`/`__device__` are empty, `__shared__` is
`static` (one copy shared by the block's threads), `threadIdx`/`blockIdx` are thread-local
and `blockDim`/`gridDim` global, `__syncthreads()` is a `pthread_barrier_wait`, device math is
<math.h>. A launch `kernel(grid, block, args)` runs the block's threads as POSIX threads, each
going through the grid's blocks in order (a barrier between blocks), so a missing barrier or a
thread's share computed wrong shows up as wrong values, as it would on a GPU.

- `RawKernel(code, name)`: `cupy.RawKernel`; arguments are device arrays (passed as their
  pointers) and NumPy scalars (passed by value, typed by the kernel's parameter list).
- `ElementwiseKernel(in_params, out_params, operation, name, preamble=...)`: the kernel body
  `fusion_gpu.py` writes, compiled in a loop over the (broadcast) elements.

    with fake_cupy.installed(), cuda_host.installed():
        ...  # programs converted now launch compiled kernels on fake_cupy arrays

What it cannot see: the device's own rounding of exp/tanh/..., NVRTC's dialect (the GPU check
compiles the same text with NVRTC), races between blocks (blocks run one after another),
shared-memory limits and speed.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from typing import ClassVar

import fake_cupy
import numpy as np

SHIM = r"""/* tests/cuda_host.py: CUDA C++ as host C++ */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
struct d2s_dim3 { unsigned x, y, z; };
static __thread d2s_dim3 threadIdx, blockIdx;
static d2s_dim3 blockDim, gridDim;
static pthread_barrier_t d2s_barrier;
#define __syncthreads() pthread_barrier_wait(&d2s_barrier)
"""

_DRIVER = r"""
static void *d2s_args[{n}];
static void *d2s_thread(void *index) {{
    threadIdx.x = (unsigned)(uintptr_t)index;
    for (unsigned b = 0; b < gridDim.x; b++) {{
        blockIdx.x = b;
        {name}({call});
        __syncthreads();
    }}
    return 0;
}}
extern "C" int d2s_launch(void **args, unsigned grid, unsigned block) {{
    pthread_t th[1024];
    for (int k = 0; k < {n}; k++) d2s_args[k] = args[k];
    gridDim.x = grid; gridDim.y = gridDim.z = 1;
    blockDim.x = block; blockDim.y = blockDim.z = 1;
    pthread_barrier_init(&d2s_barrier, 0, block);
    for (unsigned t = 0; t < block; t++)
        pthread_create(&th[t], 0, d2s_thread, (void *)(uintptr_t)t);
    for (unsigned t = 0; t < block; t++) pthread_join(th[t], 0);
    pthread_barrier_destroy(&d2s_barrier);
    return 0;
}}
"""

_ELEMENTWISE = r"""
typedef {T} T;
extern "C" int d2s_launch(void **p, int64_t n) {{
    for (int64_t e = 0; e < n; e++) {{
{params}
{body}
    }}
    return 0;
}}
"""

_built: dict = {}  # source hash -> loaded library
COMPILER = shutil.which("g++") or shutil.which("c++")  # (None: the tests using this skip)


def compile_host(source: str):
    """`source` compiled as host C++ into a shared library (cached by content), loaded."""
    key = hashlib.sha256(source.encode()).hexdigest()[:24]
    if key not in _built:
        folder = tempfile.mkdtemp(prefix="d2s_cuda_host_")
        src, so = os.path.join(folder, "k.cpp"), os.path.join(folder, "k.so")
        with open(src, "w") as f:
            f.write(source)
        r = subprocess.run([COMPILER, "-O1", "-std=c++14", "-fPIC", "-shared", "-pthread",
                            "-Wall", "-Wno-unused", src, "-o", so, "-lm"],
                           capture_output=True, text=True, check=False)
        try:
            assert r.returncode == 0, r.stderr + "\n" + source
            _built[key] = ctypes.CDLL(so)
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # a loaded library stays mapped
    return _built[key]


def parameters(code: str, name: str) -> list:
    """The C types of kernel `name`'s parameters, in order."""
    m = re.search(r"__global__\s+void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", code)
    assert m, f"no __global__ void {name}(...) in the kernel text"
    return [re.sub(r"\s*\b\w+$", "", p.strip()) for p in m.group(1).split(",")]


class RawKernel:
    """`cupy.RawKernel` running the kernel text on the host (see the module doc)."""

    made: ClassVar[list] = []  # the (code, name) of every kernel made

    def __init__(self, code: str, name: str, options=(), backend="nvrtc", **kwargs):
        self.code, self.name = code, name
        self.types = parameters(code, name)
        call = ", ".join(f"({t})d2s_args[{k}]" if "*" in t else f"*({t} *)d2s_args[{k}]"
                         for k, t in enumerate(self.types))
        self.lib = compile_host(SHIM + code + _DRIVER.format(n=len(self.types), name=name,
                                                               call=call))
        RawKernel.made.append((code, name))

    def __call__(self, grid, block, args, shared_mem=0):
        assert len(args) == len(self.types), (self.name, len(args), self.types)
        keep = []
        for a, t in zip(args, self.types, strict=True):
            if isinstance(a, fake_cupy.ndarray):
                assert "*" in t and a._a.flags.c_contiguous, (t, a._a.flags)
                keep.append(a._a)
            else:
                assert "*" not in t and isinstance(a, np.generic), (t, type(a))
                keep.append(np.array([a]))
        pointers = (ctypes.c_void_p * len(keep))(*[k.ctypes.data for k in keep])
        grid, block = (g if isinstance(g, int) else g[0] for g in (grid, block))
        assert 1 <= block <= 1024, block
        self.lib.d2s_launch(pointers, ctypes.c_uint(grid), ctypes.c_uint(block))


_CTYPE = {np.dtype("float32"): "float", np.dtype("float64"): "double"}


class ElementwiseKernel:
    """`cupy.ElementwiseKernel` of `T`-typed parameters (what `fusion_gpu.py` writes): its
    body compiled into a loop over the elements, the inputs broadcast to the outputs'
    shape as CuPy broadcasts them."""

    made: ClassVar[list] = []  # the (in_params, out_params, operation) of each

    def __init__(self, in_params, out_params, operation, name, preamble=""):
        self.ins = [p.split()[-1] for p in in_params.split(",")]
        self.outs = [p.split()[-1] for p in out_params.split(",")]
        self.operation, self.preamble = operation, preamble
        ElementwiseKernel.made.append((in_params, out_params, operation))

    def __call__(self, *arrays):
        ins, outs = arrays[:len(self.ins)], arrays[len(self.ins):]
        shape, dt = outs[0]._a.shape, outs[0]._a.dtype
        host = [np.ascontiguousarray(np.broadcast_to(a._a, shape)) for a in ins]
        params = [f"        const T {p} = ((const T *)p[{k}])[e];" for k, p in
                  enumerate(self.ins)]
        params += [f"        T &{p} = ((T *)p[{len(self.ins) + k}])[e];" for k, p in
                   enumerate(self.outs)]
        body = "\n".join("        " + ln for ln in self.operation.splitlines())
        lib = compile_host(SHIM + self.preamble + _ELEMENTWISE.format(
            T=_CTYPE[dt], params="\n".join(params), body=body))
        results = [np.empty(shape, dt) for _ in outs]
        pointers = (ctypes.c_void_p * (len(host) + len(results)))(
            *[a.ctypes.data for a in host + results])
        lib.d2s_launch(pointers, ctypes.c_int64(int(np.prod(shape))))
        for o, r in zip(outs, results, strict=True):
            o._a[...] = r


@contextlib.contextmanager
def installed():
    """`fake_cupy`'s `RawKernel` and `ElementwiseKernel` are this module's while inside
    (use inside `fake_cupy.installed()`)."""
    saved = {n: fake_cupy.FAKE.__dict__.get(n) for n in ("RawKernel", "ElementwiseKernel")}
    fake_cupy.FAKE.RawKernel = RawKernel
    fake_cupy.FAKE.ElementwiseKernel = ElementwiseKernel
    try:
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                delattr(fake_cupy.FAKE, n)
            else:
                setattr(fake_cupy.FAKE, n, v)
