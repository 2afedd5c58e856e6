"""Bounded memory: conversions of fresh closures and calls with ever-new Python values do not
grow the process without bound (programs are evicted, generated files and sources released).

Slow: run with `python -m pytest -m slow tests/d2s/process/test_memory.py -s` to see figures.
"""
from __future__ import annotations

import gc
import os
import warnings

import pytest

import d2s
import runtime as rt
from d2s.pyct import loader


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def make_closure(k):
    def scaled(x):
        if rt.mean(x) > 0:
            return x * k
        return x - k
    return scaled


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")]


def test_fresh_closures_are_released():
    x = rt.ones([4])
    for k in range(50):  # warm up: imports, templates, first allocations
        d2s.to_static(make_closure(k))(x)
    gc.collect()
    files_before = len(os.listdir(loader._directory()))
    rss_before = _rss_mb()
    for k in range(500):
        assert d2s.to_static(make_closure(k))(x).numpy()[0] == k
    gc.collect()
    growth = _rss_mb() - rss_before
    files_after = len(os.listdir(loader._directory()))
    print(f"500 fresh closures: RSS +{growth:.1f} MB, generated files {files_before} -> "
          f"{files_after}")
    assert files_after <= files_before + 5
    assert growth < 40


def test_new_python_int_arguments_keep_a_bounded_cache():
    @d2s.to_static
    def shift(x, n):
        return x + n

    x = rt.ones([4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(200):
            shift(x, n)
        gc.collect()
        rss_before = _rss_mb()
        for n in range(200, 2200):
            assert shift(x, n).numpy()[0] == 1 + n
    gc.collect()
    growth = _rss_mb() - rss_before
    print(f"2000 new int arguments: RSS +{growth:.1f} MB, {len(shift.program_cache)} programs "
          f"kept of {shift.program_cache.traces} traced")
    assert len(shift.program_cache) == shift.program_cache.max_size
    assert growth < 40
