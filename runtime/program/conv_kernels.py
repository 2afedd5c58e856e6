"""What the C convolution kernels (`conv_native.py`, `conv_depthwise_native.py`) share: the
assembly of one geometry's source, its ready function, building the geometries a traced
program will call in one go, and running a kernel over the images of a batch.

A kernel's source is specialised to one geometry (sizes are `#define`s), so a model with
several convolutions needs several of them compiled before its first call (`native_build`:
C and NumPy sum in different orders, so a cold cache must give a warm one's bits). Each
source names its function and helpers after a digest of its geometry and `#undef`s its
defines at the end, so that any number of them concatenate into one C file. Tracing a
program runs its ops' shape inference, where `nn_conv` names the kernels each convolution
will call (`plan`); the first kernel call that finds no compiled code builds every planned
source that is not in the cache together (`native_build.prepare_sources`: one compiler
process per core instead of one per source), and each is then loaded from the cache as if
it had been built alone.
"""
from __future__ import annotations

import ctypes
import hashlib
import math

import numpy as np

from . import native_build, native_pool

# once per C file, however many kernels it holds
COMMON = """#ifndef D2S_CONV_COMMON
#define D2S_CONV_COMMON
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef float v8 __attribute__((vector_size(32)));
static inline v8 load(const float *p) { v8 v; memcpy(&v, p, sizeof v); return v; }
#if defined(__clang__)
#pragma clang fp contract(fast)
#define CONTRACT
#else
#define CONTRACT __attribute__((optimize("fp-contract=fast")))
#endif
#define D2S_CAT_(a, b) a##b
#define D2S_CAT(a, b) D2S_CAT_(a, b)
#endif
"""


def kernel_name(kind: str, defines: dict) -> str:
    """The C function of `kind` for one geometry: unique in a file of several geometries."""
    digest = hashlib.sha256(repr(sorted(defines.items())).encode()).hexdigest()[:16]
    return f"d2s_{kind}_{digest}"


def assemble(kind: str, defines: dict, body: str) -> str:
    """One kernel's C file: its defines (and NAME), the common prelude, `body` (which
    `#undef`s any helper macro it defines) and the `#undef`s of its defines."""
    names = [*defines, "NAME"]
    values = [*defines.values(), kernel_name(kind, defines)]
    head = "".join(f"#define {k} {v}\n" for k, v in zip(names, values))
    return head + COMMON + body + "".join(f"#undef {k}\n" for k in names)


_holders: dict = {}  # (kind, geometry) -> a ready native_build.Holder, or None: NumPy
_planned: dict = {}  # (kind, geometry) -> its source_of, planned and not yet asked for


def plan(kind: str, defines: dict, source_of) -> None:
    """Note that a traced program will call the kernel `kind` of `defines` (its source
    `source_of(defines)`), to be built with the others at the first kernel call."""
    key = (kind, tuple(defines.items()))
    if native_build.mode() is not None and key not in _holders:
        _planned[key] = source_of


def ready_kernel(kind: str, defines: dict, source_of):
    """The ready C function of `kind` for `defines`, its source `source_of(defines)`, or None
    (native code off, or its build failed)."""
    if native_build.mode() is None:
        return None
    key = (kind, tuple(defines.items()))
    if key not in _holders:
        _planned[key] = source_of
        wanted = [(kernel_name(k, dict(d)), src(dict(d))) for (k, d), src in _planned.items()
                  if (k, d) not in _holders]
        _planned.clear()
        native_build.prepare_sources(wanted)
        holder = native_build.prepare_source(kernel_name(kind, defines), source_of(defines))
        # C and NumPy differ at float rounding: a geometry whose C code is not in the cache
        # is compiled before its first call (`native_build`), so every call, in every
        # process with the same D2S_NATIVE setting, runs the same kernel; a geometry whose
        # build fails runs NumPy on every call.
        _holders[key] = holder if holder is not None and holder.fn is not None else None
    holder = _holders[key]
    return None if holder is None else holder.fn


# Fewer multiply-adds than this in one kernel call run on the calling thread alone. Measured
# in training steps on 2 cores (docs/performance.md, "Two threads"): the ResNet and MobileNet
# kernels (0.04-2.4 M multiply-adds, 100-350 us) took 1.0-2.2x as long split over two threads
# (each piece's scratch, weight packing and cache misses on the other core's data), LeNet's
# (7.7-15 M, 0.8-1.3 ms) 0.72-0.78x.
SPLIT_MACS = 4_000_000


def macs(out_channel_values, w_shape) -> int:
    """The multiply-adds of a convolution call: one per weight of an output channel for each
    value of the array that has the output channels (the output, or its gradient)."""
    return out_channel_values.size * math.prod(w_shape[1:])


def over_images(fn, arrays, out_of_piece, work: int | None = None) -> list | None:
    """Run `fn` over the images of `arrays[0]`, in pieces on the d2s threads
    (`native_pool.py`) when its `work` (`macs`; None: any) is at least `SPLIT_MACS`, each
    piece writing `out_of_piece(lo, hi)`; those outputs in the order of their images (not of
    finishing: sums of them are then the same bits every call), or None if a call failed (no
    memory for its scratch)."""
    arrays = [np.ascontiguousarray(a) for a in arrays]
    outs = []

    def out_address(lo, hi):
        outs.append(out_of_piece(lo, hi))
        return outs[-1].ctypes.data

    common = (ctypes.c_void_p * 2)(*[a.ctypes.data for a in arrays])
    split = work is None or work >= SPLIT_MACS
    failed = any(native_pool.run_pieces(fn, common, arrays[0].shape[0], 1, split, out_address))
    return None if failed else outs
