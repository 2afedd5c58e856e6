"""`any`, `all`, `max` and `min` of values eager code has as Python numbers, and the truth of a
list of tuples whose length a tensor decides, as metric and decoding helpers write them.

Eager `any(...)` / `all(...)` give a Python bool whatever the items are, and `max` / `min` of
Python numbers give the winning item with its own type. The converted call returned bool and
int64 Tensors (`any((x < 0).any() for x in xs)`, `max(1, int(t))`), and `max(0.5, int(t))`
cast 0.5 to the int's dtype (0, not eager's 0.5). `if not kept:` of a list of tuples a tensor
`if` appends to raised "the truth value of a list whose length depends on a tensor"."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import assert_same_leaves


def summarize(xs):
    has_neg = any((x < 0).any() for x in xs)
    all_small = all(float(x.abs().max()) < 1.0 for x in xs)
    top = max(1, max(int(x.argmax()) for x in xs))      # ints: an int
    floor = min(0.25, float(xs[0].min()))                # floats: a float
    frac = max(0.5, int(xs[1].argmax()))                 # 0.5 or an int: the winner's type
    lowest = min(int(xs[1].argmin()), 1.5)
    return {"neg": has_neg, "small": all_small, "top": top, "floor": floor,
            "frac": frac, "lowest": lowest}


def _reference(xs):
    xs = [np.asarray(x, "float32") for x in xs]
    top = max(1, max(int(x.argmax()) for x in xs))
    return {"neg": bool(any((x < 0).any() for x in xs)),
            "small": bool(all(float(np.abs(x).max()) < 1.0 for x in xs)), "top": top,
            "floor": min(0.25, float(xs[0].min())), "frac": max(0.5, int(xs[1].argmax())),
            "lowest": min(int(xs[1].argmin()), 1.5)}


CASES = [([0.5, -0.2, 0.0], [0.1, 0.2, 0.3, 0.0]),     # argmax 2: an int wins over 0.5
         ([5.0, 2.0, 1.0], [0.9, 0.1, 0.0, 0.0]),      # argmax 0: 0.5 wins (eager's float)
         ([0.1, 0.9, 0.3], [-0.4, 0.2, 0.8, 0.0])]


def test_any_all_max_min_give_eager_python_numbers():
    static = d2s.to_static(summarize)
    for case in CASES:
        xs = [rt.to_tensor(np.asarray(v, "float32")) for v in case]
        want = summarize(xs)
        assert_same_leaves(want, _reference(case))
        assert_same_leaves(static(xs), want)
    assert len(static.program_cache) == 1


def keep_confident(scores, thr: float = 0.5):
    kept = []
    for i in range(scores.shape[0]):
        if scores[i] > thr:                      # a tensor if: the list's length is the run's
            kept.append((i, scores[i]))
    if not kept:
        return -1, 0.0, 0
    last = kept[-1]
    return last[0], float(last[1]), len(kept) if kept else -5


@pytest.mark.parametrize("scores", [[0.1, 0.9, 0.7], [0.1, 0.2, 0.0], [0.6, 0.1, 0.0]])
def test_truth_of_a_list_of_tuples_a_tensor_sizes(scores):
    x = rt.to_tensor(np.asarray(scores, "float32"))
    idx = [i for i, s in enumerate(np.float32(scores)) if s > 0.5]
    want = (idx[-1], float(np.float32(scores)[idx[-1]]), len(idx)) if idx else (-1, 0.0, 0)
    assert_same_leaves(keep_confident(x), want)
    assert_same_leaves(d2s.to_static(keep_confident)(x), want)
