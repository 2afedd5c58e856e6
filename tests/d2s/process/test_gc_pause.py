"""Cyclic GC around a trace (`running.gc_paused`): the pause leaves the objects it made young,
and a huge program's are moved into the oldest generation unscanned (`gc.freeze()` and
`gc.unfreeze()`), where a collection would free next to nothing. In a process that froze
objects of its own, they are scanned once, by one collection of the middle generation,
instead of as young objects and again in the middle generation soon after; or, where they are
enough to make CPython collect the oldest generation soon after, by one collection of the
whole heap; a small trace changes nothing about collection."""
from __future__ import annotations

import gc

import numpy as np

import d2s
import runtime as rt
from d2s import transpile
from d2s.running import _MANY_YOUNG


def _collections_during(fn) -> list[tuple[int, int]]:
    """(generation, young objects then) of each collection that ran while `fn()` ran."""
    seen = []

    def note(phase, info):
        if phase == "start":
            seen.append((info["generation"], gc.get_count()[0]))

    gc.collect()
    gc.callbacks.append(note)
    try:
        fn()
    finally:
        gc.callbacks.remove(note)
    return seen


def _unrolled(n: int):
    """A function of `n` blocks of tensor arithmetic, each behind a tensor `if`."""
    def many(x, w):
        h = x
        for k in range(n):  # (a Python range: unrolled into the program)
            h = rt.tanh(rt.matmul(h, w) + 0.01 * k)
            if h.mean() > 10.0:
                h = h * 0.5
        return h
    return many


def _huge_first_call(heap_of: int) -> list[tuple[int, int]]:
    """The collections of the first call of a function of ~14,000 ops (about twice as many
    new objects as `_MANY_YOUNG`), with `heap_of` objects in the oldest generation besides
    the ones alive before (frozen meanwhile: not collected, not counted); checks its
    result against eager's."""
    fn = _unrolled(2000)
    rng = np.random.default_rng(0)
    x = rt.to_tensor(rng.standard_normal([2, 4]).astype("float32"))
    w = rt.to_tensor((rng.standard_normal([4, 4]) * 0.5).astype("float32"))
    static = d2s.to_static(fn)
    transpile.convert(fn)  # (converting pauses collection too: only the trace is looked at)
    out = []
    gc.collect()
    gc.freeze()
    try:
        heap = [[i] for i in range(heap_of)]
        gc.collect()  # (`heap` in the oldest generation)
        collections = _collections_during(lambda: out.append(static(x, w)))
    finally:
        gc.unfreeze()
    del heap
    np.testing.assert_allclose(out[0].numpy(), fn(x, w).numpy(), rtol=1e-5, atol=1e-6)
    return collections


def test_a_huge_first_call_moves_its_program_to_the_oldest_generation_unscanned():
    fn = _unrolled(2000)
    rng = np.random.default_rng(0)
    x = rt.to_tensor(rng.standard_normal([2, 4]).astype("float32"))
    w = rt.to_tensor((rng.standard_normal([4, 4]) * 0.5).astype("float32"))
    static = d2s.to_static(fn)
    transpile.convert(fn)
    out = []
    assert gc.get_freeze_count() == 0
    collections = _collections_during(lambda: out.append(static(x, w)))
    assert [g for g, young in collections if young > _MANY_YOUNG // 10] == [], collections
    assert gc.get_count()[0] < _MANY_YOUNG // 10  # (the program: in the oldest generation)
    assert gc.get_freeze_count() == 0
    program = static.program_cache.last_entry.concrete.main_program
    assert gc.is_tracked(program) and program.global_block().ops
    np.testing.assert_allclose(out[0].numpy(), fn(x, w).numpy(), rtol=1e-5, atol=1e-6)


def test_beside_frozen_objects_a_huge_first_call_scans_its_program_once_with_the_whole_heap():
    # the oldest generation is small next to the program: moving the program there makes
    # CPython collect it all at its next turn (in the first call's run): it is done at once
    collections = _huge_first_call(0)
    many = [g for g, young in collections if young > _MANY_YOUNG]
    assert many == [2], collections
    assert [g for g, _ in collections].count(2) == 1, collections


def test_beside_frozen_objects_and_a_large_heap_the_program_is_scanned_with_the_middle_one():
    # the trace's objects are collected with the middle generation (once), never as a crowd
    # of young objects alone (which the middle generation's collection would scan again),
    # and not with a heap too large for CPython to collect soon
    collections = _huge_first_call(800_000)
    many = [g for g, young in collections if young > _MANY_YOUNG]
    assert many == [1], collections
    assert 2 not in [g for g, _ in collections], collections


def test_a_small_trace_leaves_collection_to_the_interpreter():
    def small(x):
        if x.sum() > 0:
            return x * 2.0
        return x - 1.0

    x = rt.to_tensor(np.arange(4, dtype="float32"))
    static = d2s.to_static(small)
    collections = _collections_during(lambda: static(x))
    assert all(g == 0 for g, _ in collections), collections
    assert _MANY_YOUNG >= 10_000  # (a program of ordinary size never reaches it)
