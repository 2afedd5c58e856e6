"""`benchmarks/thread_split.py`: a call's wall-clock time, process CPU time and each thread's
CPU time (of the threads alive at the end: the calling thread first)."""
import os
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from thread_split import measure, threads_cpu

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")


def _busy(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_call_that_waits_for_a_busy_thread():
    """The caller sleeps while a second thread computes: the wall-clock time is the other
    thread's CPU time, and the caller's own is near zero."""
    def call():
        worker = threading.Thread(target=_busy, args=(0.004,))
        worker.start()
        worker.join()

    got = measure(call, repeat=2, target=0.05)
    assert got["wall"] >= 4.0 and got["cpu"] >= 3.0
    assert got["threads"][0] < 2.0  # the calling thread (a clock tick is 10 ms: averaged)
    assert len(threads_cpu()) >= 1


def test_threads_cpu_counts_this_threads_work():
    before = threads_cpu()[threading.get_native_id()]
    _busy(0.1)
    assert threads_cpu()[threading.get_native_id()] - before >= 0.05
