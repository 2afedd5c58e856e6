"""The C kernels' thread pool (runtime/program/native_pool.py): every row computed once, in the
pieces of `threads.piece_bounds` whichever thread runs them; each piece's own argument; the
helpers made once and reused; Python threads calling at once; a forked child; and the rules
for when work is split over d2s's threads at all: only while BLAS runs on one thread
(`threads.pool_threads`), and for a convolution, from `conv_kernels.SPLIT_MACS`.
"""
from __future__ import annotations

import ctypes
import os
import signal
import threading
from itertools import pairwise

import numpy as np
import pytest

import runtime as rt
import runtime.nn.functional as F
from runtime.program import blas_threads, conv_kernels, native_build, native_pool, threads

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")

# out[i] = 2 in[i] + lo for the rows lo..hi of a piece (so each row says which piece wrote it);
# the result is the piece's row count
ROWS_SOURCE = """
#include <stdint.h>
int d2s_test_pool_rows(void **a, int64_t lo, int64_t hi) {
    const double *in = a[0];
    double *out = a[1];
    for (int64_t i = lo; i < hi; i++) out[i] = 2 * in[i] + lo;
    return (int)(hi - lo);
}
"""
# the same, and the piece's own int64 (its third argument) set to its end
OWN_SOURCE = ROWS_SOURCE.replace("d2s_test_pool_rows", "d2s_test_pool_own").replace(
    "    return", "    *(int64_t *)a[2] = hi;\n    return")


@pytest.fixture(autouse=True)
def blas_on_one_thread(monkeypatch):
    """d2s's pools split work only while BLAS runs on one thread (tested below)."""
    monkeypatch.setattr(blas_threads, "count", lambda: 1)


@pytest.fixture
def kernels(monkeypatch):
    monkeypatch.setenv("D2S_NATIVE", "sync")
    old = threads.num_threads()
    rows = native_build.ready_function("d2s_test_pool_rows", lambda: ROWS_SOURCE)
    own = native_build.ready_function("d2s_test_pool_own", lambda: OWN_SOURCE)
    assert rows is not None and own is not None and native_pool.available()
    yield rows, own
    threads.set_num_threads(old)


def _job(fn, rows: int, step: int):
    x = np.arange(rows, dtype=np.float64) * 0.5
    out = np.full(rows, np.nan)
    common = (ctypes.c_void_p * 2)(x.ctypes.data, out.ctypes.data)
    return x, out, native_pool.run_pieces(fn, common, rows, step, True)


def _expected(x, bounds):
    return np.concatenate([2 * x[lo:hi] + lo for lo, hi in pairwise(bounds)])


@pytest.mark.parametrize("n_threads, rows, step", [(1, 50, 4), (2, 50, 4), (3, 50, 4),
                                                   (3, 7, 1), (4, 3, 5), (2, 1000, 1)])
def test_every_row_once_in_the_pieces_of_piece_bounds(kernels, n_threads, rows, step):
    threads.set_num_threads(n_threads)
    bounds = threads.piece_bounds(rows, step, True)
    chunks = -(-rows // step)
    pieces = 1 if n_threads == 1 or chunks < 2 else \
        min(chunks, min(n_threads, chunks) * threads.PIECES_PER_THREAD)
    assert len(bounds) == pieces + 1 and bounds[0] == 0 and bounds[-1] == rows
    assert all(lo < hi and lo % step == 0 for lo, hi in pairwise(bounds))
    for _ in range(20):  # (helpers that wake early or late: the same rows, the same values)
        x, out, results = _job(kernels[0], rows, step)
        assert results == [hi - lo for lo, hi in pairwise(bounds)]
        np.testing.assert_array_equal(out, _expected(x, bounds))


def test_not_parallel_is_one_piece_on_any_thread_count(kernels):
    threads.set_num_threads(4)
    x = np.arange(40, dtype=np.float64)
    out = np.empty(40)
    common = (ctypes.c_void_p * 2)(x.ctypes.data, out.ctypes.data)
    assert native_pool.run_pieces(kernels[0], common, 40, 1, False) == [40]
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("n_threads", [1, 3])
def test_each_piece_gets_its_own_argument(kernels, n_threads):
    threads.set_num_threads(n_threads)
    x = np.arange(30, dtype=np.float64)
    out = np.empty(30)
    own = {}

    def own_end(lo, hi):
        own[lo] = np.zeros(1, np.int64)
        return own[lo].ctypes.data

    common = (ctypes.c_void_p * 2)(x.ctypes.data, out.ctypes.data)
    results = native_pool.run_pieces(kernels[1], common, 30, 2, True, own_end)
    bounds = threads.piece_bounds(30, 2, True)
    assert sorted(own) == bounds[:-1] and len(results) == len(bounds) - 1
    for lo, hi in pairwise(bounds):
        assert own[lo][0] == hi
    np.testing.assert_array_equal(out, _expected(x, bounds))


def test_too_many_shared_arguments_with_own_ones_is_refused(kernels):
    threads.set_num_threads(2)
    common = (ctypes.c_void_p * (native_pool.MAX_ARGS + 1))()
    with pytest.raises(ValueError, match="at most 64"):
        native_pool.run_pieces(kernels[1], common, 8, 1, True, lambda lo, hi: 0)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_helpers_are_made_once_and_reused(kernels):
    threads.set_num_threads(3)
    _job(kernels[0], 64, 1)  # (makes the helpers this count needs, if earlier tests did not)
    before = len(os.listdir("/proc/self/task"))
    for _ in range(50):
        _job(kernels[0], 64, 1)
    assert len(os.listdir("/proc/self/task")) == before


def test_python_threads_calling_at_once_each_get_their_rows(kernels):
    """A job that finds the helpers busy with another thread's job runs its pieces itself."""
    threads.set_num_threads(2)
    errors = []

    def work():
        for _ in range(100):
            x, out, results = _job(kernels[0], 96, 3)
            bounds = threads.piece_bounds(96, 3, True)
            if results != [hi - lo for lo, hi in pairwise(bounds)] or \
                    not np.array_equal(out, _expected(x, bounds)):
                errors.append(results)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_runs_jobs_on_new_helpers(kernels):
    threads.set_num_threads(2)
    _job(kernels[0], 64, 1)  # the parent's helpers exist
    pid = os.fork()
    if pid == 0:  # the child: its helpers were not copied; a job must not wait for them
        signal.alarm(30)
        try:
            ok = all(np.array_equal(out, _expected(x, threads.piece_bounds(64, 1, True)))
                     for x, out, _ in (_job(kernels[0], 64, 1) for _ in range(20)))
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_a_convolution_is_split_only_from_split_macs(monkeypatch):
    """The rule of conv_kernels.SPLIT_MACS: a call with fewer multiply-adds runs as one piece
    on the calling thread whatever the thread count; a larger one in pieces over the
    threads. Both give the NumPy path's values."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    old = threads.num_threads()
    calls = []
    real = native_pool.run_pieces

    def spy(fn, common, rows, step, parallel, extra_of=None):
        calls.append((rows, parallel))
        return real(fn, common, rows, step, parallel, extra_of)

    monkeypatch.setattr(native_pool, "run_pieces", spy)
    rng = np.random.default_rng(0)
    small = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)  # 4*6*8*8 * 27 macs
    large = rng.standard_normal((32, 6, 14, 14)).astype(np.float32)  # LeNet's second conv
    w_small = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    w_large = rng.standard_normal((16, 6, 5, 5)).astype(np.float32)
    try:
        threads.set_num_threads(2)
        for x, w, split in ((small, w_small, False), (large, w_large, True)):
            calls.clear()
            with rt.no_grad():
                got = F.conv2d(rt.to_tensor(x), rt.to_tensor(w)).numpy()
            out_size = got.size
            assert (conv_kernels.macs(got, w.shape) >= conv_kernels.SPLIT_MACS) == split
            assert out_size * np.prod(w.shape[1:]) == conv_kernels.macs(got, w.shape)
            assert calls == [(x.shape[0], split)]
            monkeypatch.setenv("D2S_NATIVE", "0")
            with rt.no_grad():
                want = F.conv2d(rt.to_tensor(x), rt.to_tensor(w)).numpy()
            monkeypatch.setenv("D2S_NATIVE", "sync")
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    finally:
        threads.set_num_threads(old)


@pytest.mark.parametrize("blas, d2s, pool", [(1, 2, 2), (1, 1, 1), (None, 3, 3), (2, 2, 1),
                                             (4, 3, 1), (2, 1, 1)])
def test_pools_use_their_threads_only_while_blas_uses_one(monkeypatch, blas, d2s, pool):
    """The rule of threads.pool_threads: BLAS's spinning workers hold the cores while it has
    more than one; an unknown BLAS (None) leaves d2s's setting as it is."""
    monkeypatch.setattr(blas_threads, "count", lambda: blas)
    old = threads.num_threads()
    try:
        threads.set_num_threads(d2s)
        assert threads.num_threads() == d2s  # the setting itself is unchanged
        assert threads.pool_threads() == pool
        assert len(threads.piece_bounds(64, 1, True)) - 1 == (
            1 if pool == 1 else pool * threads.PIECES_PER_THREAD)
    finally:
        threads.set_num_threads(old)


def _openblas_setter():
    for path in blas_threads._openblas_paths():
        lib = ctypes.CDLL(path)
        for name in blas_threads._NAMES:
            if hasattr(lib, name):
                return getattr(lib, name.replace("get_num_threads", "set_num_threads"))
    return None


def test_the_count_is_openblas_own_setting(monkeypatch):
    monkeypatch.undo()  # the real library, not the fixture's 1
    setter = _openblas_setter()
    if setter is None or blas_threads.count() is None:
        pytest.skip("no OpenBLAS in this process")
    old = blas_threads.count()
    setter.argtypes = (ctypes.c_int,)
    try:
        for n in (2, 1, 3):
            setter(n)
            assert blas_threads.count() == n
            with_d2s = threads.num_threads()
            assert threads.pool_threads() == (1 if n > 1 or with_d2s == 1 else with_d2s)
    finally:
        setter(old)
