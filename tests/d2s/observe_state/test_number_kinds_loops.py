"""A Python number that a graph loop rebinds to another type (issue 33): `best = False` before
a `for i in range(n_tensor)` whose body sets `best = i` under a tensor `if`, `total = 0` then
`total = total + 0.5` in a tensor `while`. The loop carries the number's bool and float flags
as loop variables (`d2s/operators/loop_number_kinds.py`), so after zero trips, or trips that
did not rebind it, the call gives the entry's type, and the body's type otherwise (it gave a
silent `0` for eager's `False`, `0.0` for eager's `0`). Eager vs static vs a Python reference,
type and value of every leaf, inputs taking every path through one program."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .test_number_kinds_branches import same_leaves


def first_confident_step(x, n):
    best = False  # no step confident yet
    for i in range(n):
        if x[i] > 0:
            best = i
    return best, [best]


def running_total(x, n):
    total = 0
    i = 0
    while i < n:
        total = total + float(x[i]) * 0.5
        i += 1
    return {"total": total}


def seen_any(x, n):
    found = 0
    for i in range(n):
        if x[i] > 1.0:
            found = True
    return found


def reference(fn, data, n):
    if fn is first_confident_step:
        best = False
        for i in range(n):
            if data[i] > 0:
                best = i
        return best, [best]
    if fn is running_total:
        total = 0
        for i in range(n):
            total = total + float(np.float32(data[i])) * 0.5
        return {"total": total}
    return True if any(v > 1.0 for v in data[:n]) else 0


CASES = [([1.0, -1.0, 2.0], 3), ([-1.0, -1.0, -2.0], 3), ([1.0, 1.0, -2.0], 0),
         ([-1.0, 2.0, -2.0], 2), ([0.5, 2.0, 2.0], 1)]


@pytest.mark.parametrize("fn", [first_confident_step, running_total, seen_any])
def test_the_loops_trips_decide_the_type(fn):
    static = d2s.to_static(fn)
    kinds = set()
    for data, n in CASES:
        x = rt.to_tensor(np.array(data, "float32"))
        want = reference(fn, data, n)
        same_leaves(fn(x, n), want)
        same_leaves(static(x, rt.to_tensor(n)), want)
        leaf = want[0] if isinstance(want, tuple) else want.get("total", want) if isinstance(
            want, dict) else want
        kinds.add(type(leaf))
    assert len(kinds) == 2  # (the inputs take paths of both types)
    assert len(static.program_cache) == 1
