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

The piece bounds are those of `threads.piece_bounds` whichever threads run them, so a call's
results do not depend on which thread ran which piece. The helpers are created on first use,
as many as `threads.pool_threads() - 1` (never more than 63; none while BLAS runs on more
than one thread), and are forgotten in a forked child.
"""
from __future__ import annotations

import ctypes
from itertools import pairwise

from . import native_build, threads

MAX_ARGS = 64  # shared arguments of a job whose pieces each get one more

SOURCE = r"""
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_HELPERS 63
#define MAX_ARGS D2S_MAX_ARGS  /* shared arguments of a job with one more per piece */
typedef int (*piece_fn)(void **, int64_t, int64_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;   /* guards all below but `next` */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;     /* a job for the helpers */
static pthread_cond_t left = PTHREAD_COND_INITIALIZER;     /* the last helper left a job */
static pthread_mutex_t owner = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int helpers;          /* helper threads created */
static uint64_t generation;  /* one more per job */
static int wanted, joined, inside;  /* helpers the job may use / that joined / still in it */
struct job {
    piece_fn fn;
    void **common, **extra;  /* the arguments every piece shares; one more per piece, or NULL */
    int n_common;
    const int64_t *bounds;
    int *results;
    int64_t pieces;
    atomic_llong next;  /* the next piece to take */
};
static struct job shared;  /* the job the helpers take pieces of */

static void run_piece(struct job *j, int64_t i) {
    void *table[MAX_ARGS + 1];
    void **args = j->common;
    if (j->extra) {
        memcpy(table, j->common, sizeof(void *) * j->n_common);
        table[j->n_common] = j->extra[i];
        args = table;
    }
    j->results[i] = j->fn(args, j->bounds[i], j->bounds[i + 1]);
}

static void take_pieces(struct job *j) {
    for (;;) {
        long long i = atomic_fetch_add(&j->next, 1);
        if (i >= j->pieces) return;
        run_piece(j, i);
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
        take_pieces(&shared);
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

/* args: the piece function, the arguments every piece shares, how many, one more argument
   per piece or NULL, the pieces + 1 bounds, an int per piece for its result. `threads`: the
   caller and at most threads - 1 helpers. */
int d2s_pool_run(void **args, int64_t pieces, int64_t threads) {
    int want = threads - 1 < MAX_HELPERS ? (int)(threads - 1) : MAX_HELPERS;
    struct job *j = &shared;
    struct job alone;  /* a job run by the caller only (another one may hold the helpers) */
    if ((intptr_t)args[2] > MAX_ARGS && args[3]) return -1;
    if (want < 1 || pieces < 2 || pthread_mutex_trylock(&owner) != 0) {
        want = 0;
        j = &alone;
    } else {
        pthread_mutex_lock(&lock);  /* (helpers read the shared job after taking it) */
    }
    j->fn = (piece_fn)args[0];
    j->common = (void **)args[1];
    j->n_common = (int)(intptr_t)args[2];
    j->extra = (void **)args[3];
    j->bounds = (const int64_t *)args[4];
    j->results = (int *)args[5];
    j->pieces = pieces;
    atomic_store(&j->next, 0);
    if (want == 0) {
        take_pieces(j);
        return 0;
    }
    pthread_once(&once, register_fork);
    add_helpers(want);
    wanted = want < helpers ? want : helpers;
    joined = inside = 0;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    take_pieces(j);
    pthread_mutex_lock(&lock);
    wanted = 0;  /* a helper waking from now on skips this job */
    while (inside > 0) pthread_cond_wait(&left, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&owner);
    return 0;
}
""".replace("D2S_MAX_ARGS", str(MAX_ARGS))

_run = None  # the loaded d2s_pool_run, False once its build failed (or native code is off)


def available() -> bool:
    """Whether the pool's C code is loaded (compiled, or loaded from the cache, on the first
    ask; a failed build or `D2S_NATIVE=0` leaves the pieces to the calling thread)."""
    global _run
    if _run is None:
        _run = native_build.ready_function("d2s_pool_run", lambda: SOURCE) or False
    return bool(_run)


def run_pieces(fn, common, rows: int, step: int, parallel: bool, extra_of=None) -> list:
    """The result of the C kernel `fn` (`int fn(void **args, int64_t lo, int64_t hi)`, a
    ctypes function) over rows 0..rows, in the pieces of `threads.piece_bounds`, one per
    piece in row order. Every piece gets the pointers `common` (a ctypes array), followed,
    when `extra_of` is given, by its own `extra_of(lo, hi)` (an address, made on the
    calling thread before any piece runs: a piece's own output)."""
    bounds = threads.piece_bounds(rows, step, parallel)
    pieces = len(bounds) - 1
    extra = None if extra_of is None else [extra_of(lo, hi) for lo, hi in pairwise(bounds)]
    if pieces == 1 or not available():
        table = common
        results = []
        for i in range(pieces):
            if extra is not None:
                table = (ctypes.c_void_p * (len(common) + 1))(*common, extra[i])
            results.append(fn(table, bounds[i], bounds[i + 1]))
        return results
    results = (ctypes.c_int * pieces)()
    bounds_c = (ctypes.c_int64 * (pieces + 1))(*bounds)
    extra_c = None if extra is None else (ctypes.c_void_p * pieces)(*extra)
    job = (ctypes.c_void_p * 6)(ctypes.cast(fn, ctypes.c_void_p), ctypes.addressof(common),
                                len(common), extra_c and ctypes.addressof(extra_c),
                                ctypes.addressof(bounds_c), ctypes.addressof(results))
    if _run(job, pieces, threads.pool_threads()) != 0:
        raise ValueError(f"native_pool: a job of {len(common)} shared arguments and one per "
                         f"piece (at most {MAX_ARGS})")
    return list(results)
