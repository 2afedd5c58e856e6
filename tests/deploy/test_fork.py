"""A process forked while another thread converts and traces is usable: the child converts,
traces and calls (the same function the thread was tracing, and a new one) with the right
answer, without waiting for ever on a lock held by a thread it does not have
(`os.register_at_fork` gives the child free locks, a new thread pool and no build worker).
20 forks, each bounded by a timeout; a hang is counted and killed. (A fork during another
thread's first import of a module is not covered: see `forks_while_converting`.)"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import d2s
import runtime as rt

from . import fork_work

TRIES = 20
TIMEOUT = 30.0


def _child(shared) -> int:
    """0 when the child's converted calls give the eager answers."""
    import faulthandler
    faulthandler.dump_traceback_later(TIMEOUT - 5, exit=True)  # where a hang waits, if one does
    try:
        x = np.linspace(-1, 2, 7, dtype="float32").reshape(7, 1) * np.ones((1, 97), "float32")
        got = shared(rt.to_tensor(x)).numpy()  # a shape no one traced: the function's lock
        fresh = d2s.to_static(fork_work.make_scaled(0.5))(rt.to_tensor(x)).numpy()
        want = np.tanh(np.tanh(x) * 0.5) * 0.5
        ok = np.allclose(got, x * 2.0) and np.allclose(fresh, want, rtol=1e-5, atol=1e-6)
        return 0 if ok else 1
    except BaseException:  # noqa: BLE001  (reported as the exit status)
        import traceback
        traceback.print_exc()
        return 2


def _wait(pid: int, deadline: float) -> int | None:
    """The child's exit status, or None when it is still running at `deadline` (killed)."""
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def forks_while_converting(tries: int) -> list:
    """The exit status of each of `tries` children forked while a thread converts and traces
    (None: it hung, and was killed)."""
    shared = d2s.to_static(fork_work.shared)
    stop = threading.Event()

    def busy():  # new shapes (traces under the function's lock) and new functions to convert
        n = 1
        while not stop.is_set():
            n = n % 50 + 1
            shared(rt.ones([n, 3]))
            d2s.to_static(fork_work.make_scaled(float(n)))(rt.ones([2]))
            shared.program_cache.max_size = 4  # keep tracing: old shapes are evicted

    # One conversion and trace first: Python does not reset its per-module import locks in a
    # child, so a fork during another thread's *first* import of a module (the first trace
    # imports a few lazily) can still hang the child; that is outside what d2s can reset.
    shared(rt.ones([1, 3]))
    d2s.to_static(fork_work.make_scaled(1.0))(rt.ones([2]))
    worker = threading.Thread(target=busy, daemon=True)
    worker.start()
    outcomes = []
    try:
        for _ in range(tries):
            time.sleep(0.01)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os._exit(_child(shared))
            outcomes.append(_wait(pid, time.monotonic() + TIMEOUT))
    finally:
        stop.set()
        worker.join(timeout=60)
    return outcomes


FORK = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
QUIET = pytest.mark.filterwarnings("ignore:d2s. .* has been traced")


@FORK
@QUIET
def test_a_few_forks_while_another_thread_converts():
    outcomes = forks_while_converting(4)
    assert outcomes == [0] * 4, f"exit statuses {outcomes} (None: hung)"


@pytest.mark.slow
@FORK
@QUIET
def test_twenty_forks_while_another_thread_converts_never_hang():
    outcomes = forks_while_converting(TRIES)
    hangs = outcomes.count(None)
    assert len(outcomes) == TRIES
    assert hangs == 0 and outcomes == [0] * TRIES, (
        f"{hangs} of {TRIES} forked children hung; exit statuses {outcomes}")


if __name__ == "__main__":  # python -m tests.deploy.test_fork: the hang count
    import warnings
    warnings.simplefilter("ignore")
    found = forks_while_converting(TRIES)
    print(f"{found.count(None)} of {TRIES} forked children hung; exit statuses {found}")
