"""Tuples (and dicts) holding Python numbers appended to a list whose length a tensor decides
(found by the observe fuzzer, issue 33/35: 50 of 500 examples of seed 28002 were refused with
"a tuple holding a Python value is appended to a list whose length depends on a tensor ...
which holds tensors only"). Such a list is a tensor array per part; a part that holds Python
numbers is an array of Python numbers, as a list of them grown by the program is: its items
come back as eager's ints, floats and bools (each its own type where one part mixes them),
and `len`, indexing, `pop`, `for` and `zip(*pairs)` follow the run."""
from __future__ import annotations

import pathlib

import numpy as np

import d2s
import runtime as rt

from .. import GENERATORS, runner

INPUTS = ([0.5, 1.5, 2.0], [-1.0, -0.5, -2.0], [2.5, 0.2, -1.0], [1.2, 2.4, 0.3])


def tag_steps(x):
    """(step, flag) pairs from a `for` over a tensor range, one more under a tensor `if`;
    the last one popped, as a beam search keeps its candidates."""
    tagged = [(0, 0.5, x[0])]
    for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        tagged.append((i, 1, x[1] * 2.0))
        if x[2] > 0:
            tagged.append((2.5, True, x[2]))  # (a float and a bool where ints were)
    last = tagged.pop()
    return tagged, last, len(tagged)


def tag_steps_np(x):
    tagged = [(0, 0.5, x[0])]
    for i in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        tagged.append((i, 1, x[1] * 2.0))
        if x[2] > 0:
            tagged.append((2.5, True, x[2]))
    last = tagged.pop()
    return tagged, last, len(tagged)


def count_records(x):
    """Dict records with Python numbers grown in a tensor `while`, summed in a `for`."""
    recs = []
    k = rt.zeros([])
    while k < x[0]:
        recs.append({"n": 2, "ok": bool(k > 0.5), "w": 0.25})
        k = k + 1
    tot, hits, weight = 0, 0, 0.0
    for r in recs:
        tot = tot + r["n"]
        hits = hits + r["ok"]
        weight = weight + r["w"]
    return tot, hits, weight, len(recs)


def count_records_np(x):
    recs, k = [], 0.0
    while k < x[0]:
        recs.append({"n": 2, "ok": bool(k > 0.5), "w": 0.25})
        k += 1
    return (sum(r["n"] for r in recs), sum(r["ok"] for r in recs),
            sum((r["w"] for r in recs), 0.0), len(recs))


def kept_columns(x):
    """Pairs chosen by a tensor `if`, transposed with `zip(*pairs)`."""
    pairs = [(0, False)]
    if x.mean() > 0:
        pairs.append((1, True))
    else:
        pairs.append((3, False))
        pairs.append((5, True))
    ids, flags = zip(*pairs)
    return pairs, ids[-1], flags[-1]


def kept_columns_np(x):
    pairs = [(0, False)] + ([(1, True)] if x.mean() > 0 else [(3, False), (5, True)])
    ids, flags = zip(*pairs)
    return pairs, ids[-1], flags[-1]


def _plain(v):
    """A result with tensors as NumPy numbers and each Python number with its type."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "numpy"):
        return ("tensor", round(float(v.numpy()), 5))
    if isinstance(v, np.floating):
        return ("tensor", round(float(v), 5))
    return (type(v).__name__, v)


def _check(fn, reference):
    static = d2s.to_static(fn)
    paths = set()
    for values in INPUTS:
        x = rt.to_tensor(np.asarray(values, "float32"))
        want = _plain(reference(np.asarray(values, np.float32)))
        assert _plain(fn(x)) == want
        assert _plain(static(x)) == want
        paths.add(repr(want))
    assert len(paths) > 1  # (the inputs take different paths through one program)


def test_tuples_with_numbers_of_several_types_grown_in_a_tensor_range_loop():
    _check(tag_steps, tag_steps_np)


def test_dict_records_with_numbers_grown_in_a_tensor_while():
    _check(count_records, count_records_np)


def test_pairs_of_numbers_chosen_by_a_tensor_if_and_transposed():
    _check(kept_columns, kept_columns_np)


def test_found_case_converts():
    path = pathlib.Path(__file__).parent / "found35" / "observe_tuple_of_numbers_in_loop.txt"
    out = runner.compare_saved(path, GENERATORS["observe"]()[1])
    assert out.kind == "same", str(out)
