"""`tuple(lst)` and the columns of `zip(*pairs)` of a list whose length a tensor decides,
returned: eager code returns tuples, the converted call returned lists (the fuzzer's
comparison made tuples and lists alike, so it did not see it; `runner.to_plain` keeps them
apart now). Items keep their gradient path as a returned list's do."""
from __future__ import annotations

import pathlib

import numpy as np

import d2s
import runtime as rt

from .. import GENERATORS, runner

INPUTS = ([0.5, 1.5, 2.0], [-1.0, -0.5, -2.0], [2.5, 0.2, -1.0])


def picked(x):
    """Tensor pairs and scores kept where a tensor condition holds, as tuples."""
    pairs, scores = [(x[0] * 0.0, x[0])], []
    for j in range(3):
        if x[j] > 0:
            pairs.append((x[j], x[j] * 2.0))
            scores.append(x[j] + 1.0)
    lows, _highs = zip(*pairs)
    return tuple(scores), lows, list(scores)


def picked_np(x):
    kept = [v for v in x if v > 0]
    return (tuple(v + 1.0 for v in kept), (0.0, *kept), [v + 1.0 for v in kept])


def test_tuple_of_a_list_a_tensor_grows_is_returned_as_a_tuple():
    static = d2s.to_static(picked)
    for values in INPUTS:
        x = rt.to_tensor(np.asarray(values, "float32"))
        want = picked_np(np.asarray(values, np.float32))
        for got in (picked(x), static(x)):
            assert [type(v) for v in got] == [tuple, tuple, list]
            for g, w in zip(got, want, strict=True):
                assert len(g) == len(w)
                np.testing.assert_allclose([float(t) for t in g], w, rtol=1e-6)


def kept_or_empty(x):
    """`out = ()`, then `tuple(kept)` under a tensor `if`: a tuple on both paths (it raised
    "cond: the branches return different structures: ... (Variable array<f32[]>,)")."""
    kept = []
    for j in range(3):
        if x[j] > 0:
            kept.append(x[j])
    out = ()
    if x.mean() > 0:
        out = tuple(kept)
    return out


def test_a_tuple_of_a_grown_list_beside_a_tuple_on_the_other_path():
    static = d2s.to_static(kept_or_empty)
    for values in INPUTS:
        x = np.asarray(values, np.float32)
        want = tuple(v for v in x if v > 0) if x.mean() > 0 else ()
        for got in (kept_or_empty(rt.to_tensor(x)), static(rt.to_tensor(x))):
            assert type(got) is tuple and len(got) == len(want)
            np.testing.assert_allclose([float(t) for t in got], want, rtol=1e-6)



def test_found_case_a_tuple_returned_beside_an_unbound_return_value():
    """A tuple returned on one path of a tensor `if` inside `with`, the return value unbound
    on the other: the check for a tuple beside `tuple(array)` looked at the unbound value (an
    internal "local variable '_retval' is used but it is not bound", breadth fuzz seed 28004
    while that check was new)."""
    path = pathlib.Path(__file__).parent / "found35" / "breadth_tuple_returned_beside_unbound.txt"
    out = runner.compare_saved(path, GENERATORS["breadth"]()[1])
    assert out.kind == "same", str(out)
