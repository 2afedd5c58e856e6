"""`return True` under a tensor `if` inside a loop, `return False` after it: a generation
loop's stop-sequence check (`if ids[-len(seq):] == seq: return True` over a Python list of
stop sequences, `ids = input_ids.tolist()`), an early-exit check over thresholds. Returning
an int, a float or a tensor that way converted; a Python bool (alone or in a list) raised an
internal error naming the return converter's placeholder (`OpTypeError: cond: output 1:
false_fn returned <undefined '_retval'> where another branch returned a tensor`, or `cond:
the branches return different structures: ... (Variable b1[], <undefined '_retval'>)`).
Now the call returns eager's Python bools (and ints, lists, dicts of them)."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import INTERNAL


def hit_stop_sequence(input_ids, stop_sequences):
    ids = input_ids.tolist()
    for seq in stop_sequences:
        if ids[-len(seq):] == seq:
            return True
    return False


def first_exceeded(scores, thresholds):
    for i, thr in enumerate(thresholds):
        if scores.max() > thr:
            return [True, i]
    return [False, -1]


def flags_by_name(scores, thresholds):
    for thr in thresholds:
        if scores.mean() > thr:
            return {"stop": True, "early": thr > 0.5}
    return {"stop": False, "early": False}


def _np_hit(ids, stops):
    return any(list(ids[-len(s):]) == s for s in stops)


CASES = [
    (hit_stop_sequence, [1, 2, 3], [[2, 3], [5]]),
    (hit_stop_sequence, [1, 2, 5], [[2, 3], [5]]),
    (hit_stop_sequence, [1, 2, 4], [[2, 3], [5]]),
    (first_exceeded, [0.2, 0.9], [2.0, 0.5]),
    (first_exceeded, [0.2, 0.1], [2.0, 0.5]),
    (flags_by_name, [0.7, 0.9], [0.9, 0.6]),
    (flags_by_name, [0.1, 0.2], [0.9, 0.6]),
]


@pytest.mark.parametrize("fn,values,python_arg", CASES)
def test_python_bools_returned_from_a_loop_are_eagers(fn, values, python_arg):
    static = d2s.to_static(fn)
    x = rt.to_tensor(np.asarray(values))
    want = fn(x, python_arg)
    try:
        got = static(x, python_arg)
    except Exception as e:  # (the internal error this guards against)
        assert not INTERNAL.search(str(e)), str(e)
        raise
    assert repr(got) == repr(want)  # (bool, int and float leaves: their Python types)
    assert type(got) is type(want)
    if fn is hit_stop_sequence:
        assert want == _np_hit(np.asarray(values), python_arg)
