"""A thread pool in C for the C kernels: the pieces of one kernel call run on POSIX threads
inside a single ctypes call, so no piece waits for the GIL.

Why not the Python pool of `threads.py`: a kernel piece there is Python code around a ctypes
call, so each piece takes the GIL before and after its C work, and a thread that wants the
GIL sleeps until the holder drops it. Measured on the ResNet (2 stages x 2 blocks) training
step (docs/performance.md, "Two threads"): a forward convolution of 586 µs on one thread took
868-890 µs over two, its pieces' C work waiting for the other thread's Python; the step went
from 17 to 25 ms of process CPU time.

Here the caller prepares every piece's arguments first (on its own thread, holding the GIL),
then one call of `d2s_pool_run` wakes the helper threads (a condition variable: nothing
spins), and the caller and the helpers take pieces from a shared atomic counter until none is
left. A helper that wakes after the pieces are gone does nothing, so a helper whose core is
busy costs the call nothing but the wake-up. The caller then waits only for helpers that hold
a piece. A second Python thread calling while a call is under way runs its pieces itself.

The piece bounds are those of `threads.piece_bounds` whichever pool runs them, so a call's
results do not depend on which pool ran it. The helpers are created on first use, as many as
`threads.num_threads() - 1` (never more than 63), and are forgotten in a forked child.
"""
from __future__ import annotations

import ctypes

from . import native_build, threads

SOURCE = r"""
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define MAX_HELPERS 63
typedef int (*piece_fn)(void **, int64_t, int64_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;   /* guards all below but `next` */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;     /* a job for the helpers */
static pthread_cond_t left = PTHREAD_COND_INITIALIZER;     /* the last helper left a job */
static pthread_mutex_t owner = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int helpers;          /* helper threads created */
static uint64_t generation;  /* one more per job */
static int wanted, joined, inside;  /* helpers the job may use / that joined / still in it */
static piece_fn job_fn;
static void ***job_args;
static const int64_t *job_bounds;
static int *job_results;
static int64_t job_pieces;
static atomic_llong next;

static void take_pieces(void) {
    for (;;) {
        long long i = atomic_fetch_add(&next, 1);
        if (i >= job_pieces) return;
        job_results[i] = job_fn(job_args[i], job_bounds[i], job_bounds[i + 1]);
    }
}

static void *helper(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    uint64_t seen = generation;
    for (;;) {
        while (generation == seen) pthread_cond_wait(&wake, &lock);
        seen = generation;
        if (joined >= wanted) continue;  /* enough helpers, or the job is over */
        joined++;
        inside++;
        pthread_mutex_unlock(&lock);
        take_pieces();
        pthread_mutex_lock(&lock);
        if (--inside == 0) pthread_cond_signal(&left);
    }
    return NULL;
}

static void forget_in_child(void) {  /* the helpers do not survive a fork */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    lock = fresh;
    owner = fresh;
    wake = fresh_cond;
    left = fresh_cond;
    helpers = wanted = joined = inside = 0;
}

static void register_fork(void) { pthread_atfork(NULL, NULL, forget_in_child); }

static void add_helpers(int n) {  /* under `lock` */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (helpers < n) {
        pthread_t t;
        if (pthread_create(&t, &attr, helper, NULL) != 0) break;
        helpers++;
    }
    pthread_attr_destroy(&attr);
}

/* args: the piece function, its argument table per piece, the pieces + 1 bounds, an int
   per piece for its result. `threads`: the caller and at most threads - 1 helpers. */
int d2s_pool_run(void **args, int64_t pieces, int64_t threads) {
    piece_fn fn = (piece_fn)args[0];
    void ***tables = (void ***)args[1];
    const int64_t *bounds = (const int64_t *)args[2];
    int *results = (int *)args[3];
    int want = threads - 1 < MAX_HELPERS ? (int)(threads - 1) : MAX_HELPERS;
    if (want < 1 || pieces < 2 || pthread_mutex_trylock(&owner) != 0) {
        for (int64_t i = 0; i < pieces; i++)
            results[i] = fn(tables[i], bounds[i], bounds[i + 1]);
        return 0;
    }
    pthread_once(&once, register_fork);
    pthread_mutex_lock(&lock);
    add_helpers(want);
    job_fn = fn;
    job_args = tables;
    job_bounds = bounds;
    job_results = results;
    job_pieces = pieces;
    atomic_store(&next, 0);
    wanted = want < helpers ? want : helpers;
    joined = inside = 0;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    take_pieces();
    pthread_mutex_lock(&lock);
    wanted = 0;  /* a helper waking from now on skips this job */
    while (inside > 0) pthread_cond_wait(&left, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&owner);
    return 0;
}
"""

_run = None  # the loaded d2s_pool_run, False once its build failed (or native code is off)


def available() -> bool:
    """Whether the pool's C code is loaded (compiled, or loaded from the cache, on the first
    ask; a failed build or `D2S_NATIVE=0` leaves the pieces to the calling thread)."""
    global _run
    if _run is None:
        _run = native_build.ready_function("d2s_pool_run", lambda: SOURCE) or False
    return bool(_run)


def run_pieces(fn, args_of, rows: int, step: int, parallel: bool) -> list:
    """The result of the C kernel `fn` (`int fn(void **args, int64_t lo, int64_t hi)`, a
    ctypes function) over rows 0..rows, in the pieces of `threads.piece_bounds`, one per
    piece in row order; `args_of(lo, hi)` is a piece's argument table (a ctypes array of
    pointers), made on the calling thread before any piece runs."""
    bounds = threads.piece_bounds(rows, step, parallel)
    pieces = len(bounds) - 1
    tables = [args_of(bounds[i], bounds[i + 1]) for i in range(pieces)]
    if pieces == 1 or not available():
        return [fn(t, lo, hi) for t, lo, hi in zip(tables, bounds, bounds[1:])]
    results = (ctypes.c_int * pieces)()
    table_ptrs = (ctypes.c_void_p * pieces)(*[ctypes.addressof(t) for t in tables])
    bounds_c = (ctypes.c_int64 * (pieces + 1))(*bounds)
    job = (ctypes.c_void_p * 4)(ctypes.cast(fn, ctypes.c_void_p), ctypes.addressof(table_ptrs),
                                ctypes.addressof(bounds_c), ctypes.addressof(results))
    _run(job, pieces, threads.num_threads())
    return list(results)
