"""How many threads the BLAS under NumPy runs a GEMM on, so that d2s's own threads and BLAS's
never compete for the cores.

OpenBLAS (NumPy's wheels bundle it) keeps its worker threads spinning (`sched_yield` in a
loop) for up to 2^28 cycles, about 0.1 s, after each GEMM it split over them. In a training
step that calls a GEMM every few milliseconds they never sleep, so a d2s helper thread woken
for a kernel finds its core taken: measured on 2 cores (docs/performance.md, "Two threads"),
the LSTM LM step took 5.9 ms on one thread and 9.5 ms with two BLAS and two d2s threads, and
the process used both cores fully. So `threads.pool_threads()` is 1 while BLAS runs on more
than one thread: the cores are BLAS's (the Transformer layer's GEMMs run 1.5x faster on two
of them), and d2s's pools split work only where BLAS runs on one
(`OPENBLAS_NUM_THREADS=1`, or `threadpoolctl`).

The count is asked of the OpenBLAS library loaded in this process through its C API, found
in /proc/self/maps (its exported names depend on the build: `openblas_get_num_threads`,
with the `scipy_` prefix and `64_` suffix of NumPy's wheels). Elsewhere (another BLAS, no
/proc) it is unknown: `count()` is None and d2s's pools use their threads.
"""
from __future__ import annotations

import ctypes

import numpy  # noqa: F401  (loads NumPy's BLAS: it is then in the maps)

_NAMES = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
          "openblas_get_num_threads64_", "openblas_get_num_threads")
_get = None  # OpenBLAS's get_num_threads, or False where there is none


def _openblas_paths() -> list:
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return []
    return sorted({line.split()[-1] for line in maps.splitlines()
                   if "openblas" in line.lower() and line.split()[-1].startswith("/")})


def _find():
    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _NAMES:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype, fn.argtypes = ctypes.c_int, ()
                return fn
    return False


def count() -> int | None:
    """The threads OpenBLAS runs a GEMM on now, or None: no OpenBLAS found in this process.

    >>> from runtime.program import blas_threads
    >>> n = blas_threads.count()
    >>> n is None or n >= 1
    True
    """
    global _get
    if _get is None:
        _get = _find()
    return _get() if _get else None
