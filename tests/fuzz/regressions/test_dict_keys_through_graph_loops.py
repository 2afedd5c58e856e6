"""Dict keys whose presence the run decides, through graph loops (found by the breadth fuzzer,
issue 35: 38 of 500 examples of seed 28004 were refused with "the body of a loop whose
condition is a tensor ... adds the key 'm' to the dict stats"; writing the tests showed two
wrong results beside it).

- A key the body of a graph loop adds (`stats["m"] = ...` in a `for i in range(n_tensor)`,
  also in a loop nested in another, or by one branch of a tensor `if` in the body: 8 more
  refused as "key 'm' of the dict 'stats' is set in the if branch only") exists after the
  loop where a trip set it: the loop carries a presence flag (`operators/loop_new_keys.py`).
- A key a tensor `if` set on one path kept its presence flag only until a graph loop carried
  the dict: after the loop `'b' in d` was True where eager code has no key (silently).
- `d.setdefault(k, v)` and `d.pop(k, v)` of such a key raised `KeyError` where eager code
  takes the default.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import d2s
import runtime as rt

from .. import GENERATORS, runner

INPUTS = ([1.0, 2.0], [0.25, 0.5], [-1.0, -2.0], [2.5, -0.5])  # 3, 1, 0 and 2 trips (of
# `while i < rt.sum(x)`)


def running_max(x):
    """A key first set in a tensor loop, read by `in` and `.get` in the body and after it."""
    stats = {"n": rt.zeros([])}
    i = 0
    while i < rt.sum(x):
        if "best" in stats:
            stats["n"] = stats["n"] + stats["best"]
        stats["best"] = x.max() * i
        i += 1
    return stats["n"], "best" in stats, stats.get("best", x.min()), len(stats)


def running_max_np(x):
    n, best = 0.0, None
    for i in range(max(int(np.ceil(x.sum())), 0)):
        if best is not None:
            n += best
        best = x.max() * i
    return n, best is not None, x.min() if best is None else best, 2 if best is not None else 1


def nested(x):
    """The key is set by an inner loop, which runs on some trips of the outer one only."""
    stats = {"n": rt.zeros([])}
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1
        j = rt.zeros([])
        while j < x[1] - k:
            j = j + 1
            stats["last"] = j + k * 10
    return "last" in stats, stats.get("last", rt.zeros([]) - 1)


def nested_np(x):
    last, k = None, 0.0
    while k < x[0]:
        k += 1
        j = 0.0
        while j < x[1] - k:
            j += 1
            last = j + k * 10
    return last is not None, -1.0 if last is None else last


def flagged_then_looped(x):
    """A key set by one branch of a tensor `if`, then the dict carried by a graph loop."""
    d = {"a": x}
    if x.sum() > 0:
        d["b"] = x * 2.0
    i = 0
    while i < rt.abs(x).sum():
        d["a"] = d["a"] + d.get("b", x * 0.5)
        i += 1
    return d["a"], "b" in d, d.setdefault("b", x * 5.0), d.pop("b", x * 7.0), "b" in d


def flagged_then_looped_np(x):
    b = x * 2.0 if x.sum() > 0 else None
    a = x + (b if b is not None else x * 0.5) * int(np.ceil(np.abs(x).sum()))
    kept = b if b is not None else x * 5.0
    return a, b is not None, kept, kept, False


def branch_in_loop(x):
    """A key set by one branch of a tensor `if` in a graph loop's body, read after the `if`."""
    stats = {"n": rt.zeros([])}
    h = x * 1.0
    k = rt.zeros([])
    while k < rt.abs(x[0]) + 0.5:
        k = k + 1.0
        if x[2] < 0.5 + k:
            h = h * 0.5
        else:
            stats["m"] = rt.mean(h) + k
            h = h + stats.get("m", 0.0)
        if "m" in stats:
            h = h + 1.0
    return h, "m" in stats, stats.get("m", rt.zeros([]) - 1.0), len(stats)


def branch_in_loop_np(x):
    m, h, k = None, x.astype(np.float64), 0.0
    while k < abs(x[0]) + 0.5:
        k += 1.0
        if x[2] < 0.5 + k:
            h = h * 0.5
        else:
            m = h.mean() + k
            h = h + m
        if m is not None:
            h = h + 1.0
    return h, m is not None, -1.0 if m is None else m, 1 if m is None else 2


def _check(fn, reference, inputs):
    static = d2s.to_static(fn)
    for values in inputs:
        x = np.asarray(values, np.float32)
        want = reference(x)
        for got in (fn(rt.to_tensor(x)), static(rt.to_tensor(x))):
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                if isinstance(w, (bool, int)):
                    assert type(g) is type(w) and g == w
                else:
                    np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
    assert len(static.program_cache) == 1


def test_a_key_first_set_in_a_tensor_loop_exists_where_the_loop_ran():
    _check(running_max, running_max_np, INPUTS)


def test_a_key_set_by_a_nested_tensor_loop_exists_where_it_ran():
    _check(nested, nested_np, ([0.5, 1.5], [2.5, 2.5], [-1.0, 3.0], [3.0, 0.5], [2.5, 3.5]))


def test_a_key_set_on_one_path_keeps_its_presence_through_a_tensor_loop():
    _check(flagged_then_looped, flagged_then_looped_np, INPUTS)


def test_a_key_set_by_a_tensor_if_in_a_tensor_loop_exists_where_a_trip_set_it():
    _check(branch_in_loop, branch_in_loop_np, ([0.5, 1.5, 2.0], [-1.0, -1.5, -2.0],
                                               [2.5, 0.2, 3.0], [1.5, 2.0, 0.7]))


@pytest.mark.parametrize("name", ["breadth_key_first_set_in_nested_loop",
                                  "breadth_key_set_by_an_if_in_a_loop"])
def test_found_case_converts(name):
    path = pathlib.Path(__file__).parent / "found35" / f"{name}.txt"
    out = runner.compare_saved(path, GENERATORS["breadth"]()[1])
    assert out.kind == "same", str(out)
