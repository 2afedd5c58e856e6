"""Compiling the C of a fused run once, caching it by content, and calling it.

The C source comes from the program alone (`native.py`): nothing read from a file is ever
compiled or executed but the shared objects this module wrote itself. Each source is built
with the C compiler (`$CC`, else `gcc`, else `cc`) into a cache folder (`D2S_CACHE_DIR`, else
`$XDG_CACHE_HOME/d2s` or `~/.cache/d2s`, subfolder `native`), named by a SHA-256 of the
source, the compiler (path, size, modification time), its flags and the CPU (`-march=native`
code must not run on another machine sharing the folder). The folder is created private
(0700); a folder or file owned by another user, or writable by group or others, is not used.
A build writes a temporary file and renames it into place, so processes building the same
source at once are safe.

`D2S_NATIVE`: unset or `1`: fused runs use the C code when a compiler exists. `sync`: every
source not in the cache is compiled on the calling thread (tests, benchmarks). `0`: never
(the NumPy code only).

Bitwise determinism: the same inputs give the same bits on every call of a program, and in
every process with the same `D2S_NATIVE` setting, whether the cache is cold or warm. So with
`1` the path of a run is chosen by what its C code computes (`same_bits_as_numpy`):

- a run of ops whose C result is NumPy's to the bit (`SAME_BITS_AS_NUMPY`: + - * /, sqrt,
  maximum, minimum, relu, neg, abs, square; correctly rounded, nothing contracted) that is
  not in the cache is compiled on a background thread, and its calls run the NumPy code until
  the C code is ready: a first call never waits, and the switch changes no bit;
- any other run (exp, log, tanh, sin, cos from the C library, row reductions accumulated in
  double) that is not in the cache is compiled before its first call (0.3-0.8 s per source,
  once per machine), so it runs the C code from its first call on, as it does with a warm
  cache.

A run whose build fails runs the NumPy code on every call, and a call whose C code raises a
floating-point exception that `np.geterr()` reports runs the NumPy code (the same inputs and
error settings, the same path). `sync` gives the bits of `1`; `0` and `1` differ by a few
units in the last place on the second kind of run (`tests/static/test_native_determinism.py`).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import types

import numpy as np

from . import native

FLAGS = ("-O3", "-march=native", "-fopenmp-simd", "-ffp-contract=off", "-fno-math-errno",
         "-fPIC", "-shared")
PLAIN_FLAGS = ("-O2", "-ffp-contract=off", "-fPIC", "-shared")  # if the first build fails
# elementwise ops correctly rounded in C as in NumPy (or exact): a run of these alone gives
# NumPy's bits; exp, log, tanh, sin, cos and the row reductions do not
SAME_BITS_AS_NUMPY = frozenset({"add", "subtract", "multiply", "divide", "sqrt", "maximum",
                                "minimum", "relu", "neg", "abs", "square"})
BITS = {"invalid": 1, "divide": 2, "over": 4, "under": 8}  # as the C function returns them

_lock = threading.Lock()
_loaded: dict = {}  # key -> ctypes function (or None: its build failed)
_queue: queue.Queue | None = None
_pending = [0]
_idle = threading.Condition(_lock)
_compiler: list = []
_stats = {"built": 0, "loaded": 0, "failed": 0, "build_seconds": 0.0, "native_calls": 0,
          "numpy_calls": 0}


def mode():
    """"background", "sync" or None (off, or no C compiler)."""
    env = os.environ.get("D2S_NATIVE", "1").strip().lower()
    if env in ("0", "off", "no", "false") or compiler() is None:
        return None
    return "sync" if env == "sync" else "background"


def compiler():
    """(path, identity) of the C compiler, or None."""
    if not _compiler:
        path = None
        for name in ([os.environ["CC"]] if os.environ.get("CC") else []) + ["gcc", "cc"]:
            path = shutil.which(name)
            if path:
                break
        ident = None
        if path:
            st = os.stat(path)
            ident = f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"
        _compiler.append((path, ident) if path else None)
    return _compiler[0]


def cache_dir():
    """The private cache folder (created), or None if it cannot be used safely."""
    base = os.environ.get("D2S_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "d2s")
    path = os.path.join(base, "native")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path if _private(path) else None
    except OSError:
        return None


def _private(path: str) -> bool:
    st = os.stat(path)
    return (not hasattr(os, "getuid") or st.st_uid == os.getuid()) and not st.st_mode & 0o022


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features", "model name")):
                    return line
    except OSError:
        pass
    return platform.processor() + platform.machine()


_CPU = None


def key_of(source: str) -> str:
    global _CPU
    if _CPU is None:
        _CPU = _cpu()
    h = hashlib.sha256()
    for part in (source, compiler()[1], " ".join(FLAGS), _CPU, sys.platform):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


class Holder:
    """The C function of one fused run once it is ready (`fn`), with its plan."""

    def __init__(self, plan, key):
        self.plan = plan
        self.key = key
        self.fn = None


def prepare(group, block):
    """A `Holder` for `group`'s C function (loaded from the cache, compiled now or queued),
    or None when native code is off, the run does not fit `native.py`'s layout, or no cache
    folder can be used."""
    how = mode()
    if how is None:
        return None
    plan = native.plan(group, block, vector_math=_vector_math())
    if plan is None:
        return None
    return holder_of(plan, how, same_bits_as_numpy(group, block))


def prepare_source(name: str, source: str):
    """A `Holder` for the C function `name` of a generated `source` (the convolution kernels
    of `conv_native.py`; signature `int name(void **arrays, int64_t lo, int64_t hi)`), as
    `prepare` makes one for a fused run; None when native code is off or no cache folder
    can be used."""
    how = mode()  # (a convolution sums in another order than NumPy: not the same bits)
    return None if how is None else holder_of(types.SimpleNamespace(name=name, source=source),
                                              how, exact=False)


def prepare_sources(items: list) -> None:
    """Build those of the generated C files `items` ((function name, source) pairs whose
    names do not clash: `conv_kernels.assemble`) that are not in the cache, concatenated into
    one file per core and compiled in parallel; each shared object is then stored under the
    key of every source in it, so `prepare_source` loads each as if built alone. A model's
    first call compiles its convolution geometries so (`conv_kernels.py`): one compiler
    process per core instead of one per geometry. A failed build leaves its sources to
    `prepare_source`, one at a time."""
    folder = cache_dir()
    if mode() is None or folder is None:
        return
    missing = [(name, source) for name, source in dict(items).items()
               if not os.path.exists(os.path.join(folder, key_of(source) + ".so"))]
    if len(missing) < 2:
        return
    parts = min(os.cpu_count() or 1, len(missing))
    workers = [threading.Thread(target=_build_together, args=(missing[i::parts], folder))
               for i in range(parts)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def _build_together(chunk: list, folder: str) -> None:
    source = "".join(text for _, text in chunk)
    holder = Holder(types.SimpleNamespace(name=chunk[0][0], source=source), key_of(source))
    _build(holder, folder)
    if holder.fn is None:
        return
    built = os.path.join(folder, holder.key + ".so")
    for _, text in chunk:  # (a rename into place, as `_build` does: atomic)
        target = os.path.join(folder, key_of(text) + ".so")
        temporary = f"{target}.{os.getpid()}.{threading.get_ident()}"
        try:
            os.link(built, temporary)
            os.replace(temporary, target)
        except OSError:
            return


_ready: dict = {}  # function name -> its ready C function, or None (its build failed)


def ready_function(name: str, source_of):
    """The ready C function `name` of a fixed kernel (softmax, LayerNorm: one per dtype), its
    source made by `source_of()` on the first ask, or None (native code off, or its build
    failed). Inexact code: built before its first call (`prepare_source`)."""
    if mode() is None:
        return None
    if name not in _ready:
        holder = prepare_source(name, source_of())
        _ready[name] = holder.fn if holder is not None else None
    return _ready[name]


def holder_of(plan, how, exact: bool):
    """A `Holder` for the C function of `plan` (its `name` and `source`): loaded from the
    cache, or built now unless its C code computes NumPy's bits (`exact`: then queued for the
    background, its calls running the NumPy code meanwhile); None when its build failed or no
    cache folder can be used."""
    folder = cache_dir()
    if folder is None:
        return None
    holder = Holder(plan, key_of(plan.source))
    holder.exact = exact  # (how its variants are built: `native_run.py`)
    with _lock:
        if holder.key in _loaded:
            holder.fn = _loaded[holder.key]
            return holder if holder.fn is not None else None
    so = os.path.join(folder, holder.key + ".so")
    if os.path.exists(so):
        holder.fn = _load(holder, so)
        return holder if holder.fn is not None else None
    if how == "sync" or not exact:
        _build(holder, folder)
        return holder if holder.fn is not None else None
    _submit(holder, folder)
    return holder


def same_bits_as_numpy(group, block) -> bool:
    """Whether `group`'s C code computes NumPy's bits (see the module doc): then the NumPy
    code may run its calls until the C code is built in the background."""
    return all(block.ops[j].type in SAME_BITS_AS_NUMPY for j in group.ops)


def _vector_math() -> bool:
    """glibc's vector math library (exp, tanh, ... on 4-8 floats at once) is linked where
    it exists: x86-64 Linux with glibc 2.35 or later."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    libc, version = platform.libc_ver()
    try:
        return libc == "glibc" and tuple(int(v) for v in version.split(".")[:2]) >= (2, 35)
    except ValueError:
        return False


def _load(holder, so):
    try:
        if not _private(so):
            fn = None
        else:
            fn = getattr(ctypes.CDLL(so), holder.plan.name)
            fn.restype = ctypes.c_int
            fn.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
            _stats["loaded"] += 1
    except (OSError, AttributeError):
        fn = None
    with _lock:
        _loaded[holder.key] = fn
    return fn


def _build(holder, folder) -> None:
    """Compile `holder`'s source into the cache folder (atomically) and load it."""
    import time
    t0 = time.perf_counter()
    so = os.path.join(folder, holder.key + ".so")
    path = compiler()[0]
    ok = False
    fd, src = tempfile.mkstemp(suffix=".c", dir=folder)
    out = src[:-2] + ".so"
    try:
        with os.fdopen(fd, "w") as f:
            f.write(holder.plan.source)
        libs = ["-lmvec", "-lm"] if "simd(" in holder.plan.source else ["-lm"]
        for flags, extra in ((FLAGS, libs), (PLAIN_FLAGS, ["-lm"])):
            if extra is not libs:  # the plain build: without the vector declarations
                with open(src, "w") as f:
                    f.write("\n".join(ln for ln in holder.plan.source.splitlines()
                                      if "simd(" not in ln) + "\n")
            r = subprocess.run([path, *flags, src, "-o", out, *extra], capture_output=True,
                               timeout=120, check=False)
            if r.returncode == 0:
                os.chmod(out, 0o700)
                os.replace(out, so)
                ok = True
                break
    except (OSError, subprocess.SubprocessError):
        ok = False
    finally:
        for p in (src, out):
            try:
                os.unlink(p)
            except OSError:
                pass
    _stats["build_seconds"] += time.perf_counter() - t0
    if ok:
        _stats["built"] += 1
        holder.fn = _load(holder, so)
    else:
        _stats["failed"] += 1
        with _lock:
            _loaded[holder.key] = None


def _submit(holder, folder) -> None:
    global _queue
    with _lock:
        if _queue is None:
            _queue = queue.Queue()
            threading.Thread(target=_worker, args=(_queue,), name="d2s-native-build",
                             daemon=True).start()
        _pending[0] += 1
        _queue.put((holder, folder))


def _worker(q) -> None:
    while True:
        holder, folder = q.get()
        try:
            with _lock:
                done = holder.key in _loaded
                fn = _loaded.get(holder.key)
            if done:
                holder.fn = fn
            else:
                _build(holder, folder)
        finally:
            with _lock:
                _pending[0] -= 1
                _idle.notify_all()


def wait(timeout: float | None = None) -> bool:
    """Block until every queued build is done (True), or `timeout` seconds passed."""
    with _lock:
        return _idle.wait_for(lambda: _pending[0] == 0, timeout)


def forget() -> None:
    """Drop the functions this process loaded (a later run loads or builds anew from the
    cache folder): for measuring a cold cache."""
    with _lock:
        _loaded.clear()


def count(event: str) -> None:
    """Count a call of a fused run by its C code (`native_calls`) or NumPy's (`numpy_calls`)."""
    _stats[event] += 1


def stats() -> dict:
    """Counts of builds, loads and failed builds, the seconds spent building, and of calls
    run by C code or handed to the NumPy code (not ready, or a floating-point exception)."""
    return dict(_stats)


def _forget_worker() -> None:
    """In a forked child: no build thread, and fresh locks (the parent's may have been held
    by a thread that does not exist here)."""
    global _queue, _lock, _idle
    _queue = None
    _pending[0] = 0
    _lock = threading.Lock()
    _idle = threading.Condition(_lock)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker)


def error_mask() -> int:
    """The exception bits whose NumPy error setting is not 'ignore'."""
    err = np.geterr()
    return sum(bit for name, bit in BITS.items() if err[name] != "ignore")
