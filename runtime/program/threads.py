"""The small persistent thread pool that runs fused chains on every core.

NumPy's ufuncs release the GIL while they loop over an array, so the row chunks of a fused
chain (`fusion.py`) can run on several threads at once. The pool is created on first use,
holds `num_threads() - 1` workers (the calling thread does one share), and is dropped in a
forked child (its threads do not survive a fork).

The thread count is `D2S_NUM_THREADS` when set (1 turns threading off), else the cores this
process may run on; `set_num_threads(n)` changes it at run time, for programs already
compiled too. Work is split over those threads only while the BLAS under NumPy runs on one
thread (`pool_threads`; with more, its spinning workers hold the cores: `blas_threads.py`).
The C kernels split their pieces over the C threads of `native_pool.py` instead of this pool.
"""
from __future__ import annotations

import itertools
import os
import threading

import numpy as np

from . import blas_threads


def _default_threads() -> int:
    env = os.environ.get("D2S_NUM_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"D2S_NUM_THREADS must be a positive integer, got {env!r}") \
                from None
        if n < 1:
            raise ValueError(f"D2S_NUM_THREADS must be a positive integer, got {env!r}")
        return n
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # platforms without sched_getaffinity
        return os.cpu_count() or 1


_threads = _default_threads()
_pool = None
_pool_size = 0
_lock = threading.Lock()


def num_threads() -> int:
    """How many threads a large fused chain runs on (1: the calling thread only)."""
    return _threads


def pool_threads() -> int:
    """The threads d2s's pools split work over now: `num_threads()`, or 1 while the BLAS
    under NumPy runs on more than one thread (its workers spin between GEMMs and hold the
    cores: `blas_threads.py`)."""
    if _threads <= 1:
        return 1
    blas = blas_threads.count()
    return 1 if blas is not None and blas > 1 else _threads


def set_num_threads(n: int) -> None:
    """Run large fused chains on `n` threads (1 turns threading off).

    >>> from runtime.program import threads
    >>> old = threads.num_threads()
    >>> threads.set_num_threads(1)
    >>> threads.num_threads()
    1
    >>> threads.set_num_threads(old)
    """
    global _threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    _threads = n  # a smaller pool is replaced when it is next needed


def _get_pool(workers: int):
    global _pool, _pool_size
    if _pool is None or _pool_size < workers:
        with _lock:
            if _pool is None or _pool_size < workers:
                from concurrent.futures import ThreadPoolExecutor
                old = _pool
                _pool = ThreadPoolExecutor(workers, thread_name_prefix="d2s-fused")
                _pool_size = workers
                if old is not None:
                    old.shutdown(wait=False)
    return _pool


def _forget_pool() -> None:
    """In a forked child: the parent's threads are gone, and its lock may have been held by
    one of them."""
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _with_errstate(work, err):
    with np.errstate(**err):  # the caller's floating-point error settings, in this thread
        work()


PIECES_PER_THREAD = 4


def piece_bounds(rows: int, step: int, parallel: bool) -> list:
    """The bounds of the pieces rows 0..rows are split into: `[0, rows]` (one piece) unless
    `parallel` and more than one thread is allowed, else whole chunks of `step` rows, about
    `PIECES_PER_THREAD` pieces per thread (at most one per chunk), over `pool_threads()`."""
    chunks = -(-rows // step)
    t = pool_threads() if parallel and chunks > 1 else 1  # (asks BLAS only when it matters)
    if t <= 1:
        return [0, rows]
    pieces = min(chunks, min(t, chunks) * PIECES_PER_THREAD)
    return [min(rows, (chunks * i // pieces) * step) for i in range(pieces + 1)]


def run_rows(part, rows: int, step: int, parallel: bool) -> None:
    """`part(lo, hi)` over rows 0..rows: on the calling thread alone, or (when `parallel`
    and more than one thread is allowed) over the threads, in the pieces of `piece_bounds`
    that each thread takes in turn from a shared counter: on a machine where another process
    keeps a core busy, the threads that do run take the pieces of one that does not (a fixed
    share per thread would wait for it). A worker that has not started when the calling
    thread finds no piece left is cancelled, not waited for. (C kernels run their pieces on
    `native_pool.py`'s threads instead: no GIL between pieces.)"""
    bounds = piece_bounds(rows, step, parallel)
    pieces = len(bounds) - 1
    if pieces == 1:
        part(0, rows)
        return
    taken = itertools.count()  # next() on it is atomic under the GIL

    def work():
        for i in taken:
            if i >= pieces:
                return
            part(bounds[i], bounds[i + 1])

    t = min(pool_threads(), pieces)
    pool = _get_pool(t - 1)
    err = np.geterr()
    futures = [pool.submit(_with_errstate, work, err) for _ in range(1, t)]
    try:
        work()
    finally:
        for f in futures:  # every piece finishes (or fails) before the result is used
            if not f.cancel():
                f.exception()
    for f in futures:
        if not f.cancelled():
            f.result()
