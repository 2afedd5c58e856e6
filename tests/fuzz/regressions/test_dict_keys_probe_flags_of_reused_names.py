"""Found by the dict-keys generator (seed 32102, 1 internal error in 300; seed 32104, 1 in
600) once graph loops carry flags of keys first set through the dict object: an `if` in a
loop body sets two keys by `setdefault` in one branch while the other sets a key of an
argument's dict; the loop is built twice (`NewKeys`), and a probe trace of the second build
took the presence flag a discarded probe had registered for a value of the same name (a
probe's names are given out again), raising an internal "Variable 't133' (b1[]) was created
inside a cond/while/switch_case block". `key_flags.flag_for` skips values and flags of
discarded blocks."""
import numpy as np

import d2s
import runtime as rt


class Box:
    def __init__(self):
        self.stats = {}


def f(x, y, o):
    h = x * 1.0
    d = {}
    acc = 0
    for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        h = h + d.get("c", x * 0.0)
        if rt.mean(x) > 0.0:
            o.stats["c"] = h * 1.5
            acc = acc + len(d)
        else:
            d.setdefault("c", y * 1.0)
            d.setdefault("b", y * 1.0)
    o.stats["b"] = h * 1.5
    h = h + d.pop("b", y * 0.0)
    return h, acc, len(d), "c" in d, d.get("b", x * 0.0 - 5.0), len(o.stats)


INPUTS = [([2.25, 1.25, 2.25], [2.25, 0.75, -2.75]),
          ([-2.75, -1.25, -0.75], [2.25, -1.25, -0.25]),
          ([1.25, 0.75, -2.75], [2.25, 1.25, 0.25]),
          ([-0.25, -0.25, -0.25], [-0.25, -0.25, -2.75])]


def test_flags_of_a_discarded_probe_are_not_taken_by_a_later_one():
    static = d2s.to_static(f)
    for xv, yv in INPUTS:
        x, y = rt.to_tensor(np.float32(xv)), rt.to_tensor(np.float32(yv))
        eager_box, static_box = Box(), Box()
        want, got = f(x, y, eager_box), static(x, y, static_box)
        for k in (0, 4):
            np.testing.assert_allclose(got[k].numpy(), want[k].numpy())
        assert got[1:4] + got[5:] == want[1:4] + want[5:]
        assert list(static_box.stats) == list(eager_box.stats)
        for key, value in eager_box.stats.items():
            np.testing.assert_allclose(static_box.stats[key].numpy(), value.numpy())
