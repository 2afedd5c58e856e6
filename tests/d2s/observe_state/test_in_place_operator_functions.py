"""`operator.ior(tags, seen)` & co. called as functions on a caller's set and a set the
converted code made change the caller's set in place and give it back, as eager code (and as
`tags |= seen`) does; before, the converted call gave a new set and left the caller's as it
was (silently)."""
import operator

import numpy as np
import pytest

import d2s
import runtime as rt


def _score(x, tags, names, fn):
    found = {"long" if x.shape[0] > 2 else "short", "seen"}
    out = fn(tags, found)
    names = operator.iadd(names, ["step"])
    if x.sum() > 0:  # (a tensor `if`: inputs take both paths of one program)
        y = x * 2.0
    else:
        y = -x
    return y, out is tags, len(tags), names is not None


@pytest.mark.parametrize("fn", [operator.ior, operator.iand, operator.isub, operator.ixor])
def test_in_place_set_functions_change_the_callers_set(fn):
    def score(x, tags, names):
        return _score(x, tags, names, fn)

    static = d2s.to_static(score)
    for data, start in [([1.0, 2.0, 3.0], {"seen", "a"}), ([-1.0, -2.0, 0.5], {"long"}),
                        ([2.0, -5.0, 1.0], set()), ([0.5, 0.25, 1.0], {"seen", "long", "b"})]:
        got = []
        for f in (score, static):
            tags, names = set(start), ["x"]
            y, same, n, _ = f(rt.to_tensor(np.array(data, "float32")), tags, names)
            got.append((y.numpy().tolist(), same, n, sorted(tags), names))
        ref = fn(set(start), {"long", "seen"})
        x = np.array(data, "float32")
        want = (x * 2 if x.sum() > 0 else -x).tolist()
        assert got[0] == got[1] == (want, True, len(ref), sorted(ref), ["x", "step"])


def test_a_made_set_on_the_left_is_the_made_sets_own_in_place_operator():
    def f(x, extra):
        mine = {"a"}
        out = operator.ior(mine, extra)
        return x + len(out), sorted(out), out is mine

    static = d2s.to_static(f)
    for extra in ({"b"}, {"a", "c", "d"}):
        want, got = f(rt.to_tensor(1.0), set(extra)), static(rt.to_tensor(1.0), set(extra))
        assert (float(got[0]), got[1], got[2]) == (float(want[0]), want[1], want[2])
