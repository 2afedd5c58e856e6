"""Found by the dict-keys generator (seed 35805, 300 examples; 1 disagreement) in session 20:
keys set in graph loops inside both branches of tensor `if`s, a loop over the
dict inside a nested `if`, then `setdefault` of a flagged key in a loop in one branch of a
later `if`: on an input where no loop runs, `'c' in d` and `len(d)` of the converted call say
the key 'c' is present where eager code has no 'c' (a silent wrong result). The `setdefault`
alone in the loop's body did not make `d` loop state, so the mutation log, not the loop's
presence flags, carried the key; it is state now (`converters/loops.py`, see
test_dict_setdefault_in_graph_loops.py)."""
import numpy as np

import d2s
import runtime as rt


class Box:
    def __init__(self):
        self.stats = {}


def trips(x):
    return rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")


def f(x, y, o):
    h = x * 1.0
    d = {}
    if rt.mean(x) > 0.0:
        for i in range(trips(x)):
            d["a"] = d.get("a", x * 0.0) + h * 0.5
        if x[0] > 0.5:
            d["c"] = h * 2.0
            for v in d.values():
                h = h + v * 0.5
    else:
        for i in range(trips(x)):
            d["n"] = d.get("n", 0) + 1
        for i in range(trips(x)):
            o.stats["b"] = h * 1.5
    if rt.mean(x) > 0.0:
        for i in range(trips(x)):
            o.stats["c"] = h * 1.5
    elif x[0] > 0.5:
        if "b" in d:
            h = h + d["b"]
    elif "a" in d:
        h = h + d["a"]
    if x[0] > 0.5:
        if rt.sum(h) > 1.0:
            d["b"] = d.get("b", x * 0.0) + h * 0.5
        else:
            d["a"] = h * 2.0
        if x[0] > 0.5:
            d["a"] = d.get("a", x * 0.0) + h * 0.5
    else:
        for i in range(trips(x)):
            d.setdefault("c", y * 1.0)
    return len(d), "a" in d, "b" in d, "c" in d, "n" in d


INPUTS = [([1.25, 2.75, 0.25], [-0.25, -0.25, 0.25]),
          ([-0.25, -0.25, -1.25], [0.25, -1.25, -1.25]),
          ([0.75, -2.75, -1.25], [2.25, 0.75, 0.75])]


def test_keys_of_nested_loops_and_ifs_as_eager():
    static = d2s.to_static(f)
    eager_box, static_box = Box(), Box()
    for xv, yv in INPUTS:
        x, y = rt.to_tensor(np.float32(xv)), rt.to_tensor(np.float32(yv))
        assert static(x, y, static_box) == f(x, y, eager_box)
