"""`lst[i] = v` that raises Python's `IndexError` on one path of a tensor `if` (or in a graph
loop's body) raises it when the program takes that path, as eager code does (found by the
state fuzzer, seed 32506: 2 of 150 examples were internal errors: the converted call raised
"list assignment index out of range" on every input, because tracing the branch the input
does not take ran the store).

`lst.pop()` of an empty list there already raised when run (`block_values.raise_when_run`):
the check that the error is the user's own looked for converted code or d2s's list operators
as the innermost frame, and the store `lst[i] = v` runs in `computed_keys.set_item`.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import d2s
import runtime as rt

from .. import GENERATORS, runner


def last_replaced(x, y):
    """One branch pops the only item, then replaces the last item: an IndexError there."""
    hist = [x * 1.0]
    h = x * 1.0
    if y[0] > x[1]:
        h = h + hist.pop()
        hist[-1] = x - 1.0
    return h, len(hist)


def slot_written(x):
    """A graph loop's body writes past the end of a list: eager raises where it runs."""
    slots = [x * 0.0]
    i = 0
    while i < rt.sum(x):
        slots[3] = x * i
        i += 1
    return slots[0]


@pytest.mark.parametrize("fn, inputs", [
    (last_replaced, ([[1.0, 2.0], [0.0, 0.0]], [[1.0, -2.0], [3.0, 0.0]])),  # not taken, taken
    (slot_written, ([[-1.0, -2.0]], [[1.0, 2.0]])),                          # 0 trips, 3 trips
])
def test_the_error_is_raised_where_the_path_runs(fn, inputs):
    static = d2s.to_static(fn)
    for args in inputs:
        tensors = [rt.to_tensor(np.asarray(a, np.float32)) for a in args]
        got = []
        for f in (fn, static):
            try:
                out = f(*tensors)
                got.append([o.numpy().tolist() if isinstance(o, rt.Tensor) else o
                            for o in (out if isinstance(out, tuple) else (out,))])
            except IndexError as e:  # (in the loop the list is a tensor array: the array's
                got.append(("IndexError", str(e) if fn is last_replaced else ""))  # message)
        assert got[0] == got[1]
    assert len(static.program_cache) == 1


def test_found_case_agrees():
    path = pathlib.Path(__file__).parent / "found35" / "state_item_store_in_untaken_branch.txt"
    out = runner.compare_saved(path, GENERATORS["state"]()[1])
    assert out.kind in ("same", "same_error"), str(out)
