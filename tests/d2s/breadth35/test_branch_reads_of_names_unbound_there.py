"""A branch of a tensor `if` that reads a name no path has bound yet (`run += 1` on the first
trip of a loop unrolled over a tensor's rows, where the other branch binds `run = 0`)
converts: eager code raises
`UnboundLocalError` only if it takes that branch, and so does the program when it runs (it was
refused at conversion: "local variable 'run' is used but it is not bound here").

A graph loop (a tensor trip count) whose body reads a name that it binds on an earlier trip
only (`if i == 0: level = 1` / `else: level = level + 1`) cannot be one program (the name
would be unbound when the loop starts): the refusal says so at the loop and the read."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def run_lengths(values):
    """AutoGraph's `for_initializes_local_var`: the streak restarts at the first item."""
    acc = 0
    for v in values:
        if v == values[0]:
            run = 0
        else:
            run += 1
        acc = acc * 10 + run
    return acc


def run_lengths_ref(values):
    acc = 0
    for v in values:
        if v == values[0]:
            run = 0
        else:
            run += 1  # (raises where eager raises)
        acc = acc * 10 + run
    return acc


def streak_against_second(values):
    acc = 0
    for v in values:
        if v != values[1]:
            run = 0
        else:
            run += 1
        acc = acc * 10 + run
    return acc


@pytest.mark.parametrize("fn", [run_lengths, streak_against_second])
def test_reads_on_the_first_unrolled_trip(fn):
    converted = d2s.to_static(fn)
    for data in ([4, 5, 6], [4, 4, 6], [5, 5, 6], [4, 4, 4], [6, 5, 5]):
        x = np.asarray(data, np.int64)
        try:
            want = fn.__globals__[fn.__name__](rt.to_tensor(x))
        except UnboundLocalError as e:
            with pytest.raises(UnboundLocalError) as got:
                converted(rt.to_tensor(x))
            assert str(got.value) == str(e)
            assert "run += 1" in _notes(got.value)  # (the user's line)
            continue
        got = converted(rt.to_tensor(x))
        assert int(got) == int(want)
        if fn is run_lengths:
            assert int(got) == run_lengths_ref(data)
    assert len(converted.program_cache) == 1


def test_graph_loop_reading_a_name_bound_on_an_earlier_trip_converts():
    """(Refused at conversion before: the loop now carries whether `level` is bound,
    `operators/loop_bound.py`; tests/d2s/breadth35/test_names_bound_on_some_trips.py.)"""
    def counter(n):
        for i in range(n):
            if i == 0:
                level = 1
            else:
                level = level + 1
        return level

    converted = d2s.to_static(counter)
    for n in (3, 1):
        got = converted(rt.to_tensor(n))
        assert got == counter(rt.to_tensor(n)) == n and type(got) is int
    with pytest.raises(UnboundLocalError) as e:
        converted(rt.to_tensor(0))
    assert str(e.value) == ("cannot access local variable 'level' where it is not associated "
                            "with a value")
    assert "for i in range(n):" in _notes(e.value)  # (the user's loop)
    assert len(converted.program_cache) == 1


def _notes(e: BaseException) -> str:
    return "".join(getattr(e, "__notes__", []))
