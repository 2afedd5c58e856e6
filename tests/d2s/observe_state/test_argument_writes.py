"""State written through arguments inside graph loops: a dict passed in (`stats["count"] += 1`
in a tensor `while`) is changed in place, as eager code changes it, and holds Python numbers
after the call, like an attribute changed in the same loop."""
import numpy as np

import d2s
import runtime as rt


class Box:
    def __init__(self):
        self.steps = 0


def count_until(x, stats, box):
    total = rt.zeros([], "float32")
    i = rt.zeros([], "int64")
    while total < x.sum():
        total = total + x[i % x.shape[0]]
        stats["count"] += 1
        stats["seen"] = stats["seen"] + 0.5
        box.steps += 1
        i += 1
    return total


def reference(x, count, seen, steps):
    total, i = np.float32(0), 0
    while total < x.sum():
        total += x[i % len(x)]
        count, seen, steps, i = count + 1, seen + 0.5, steps + 1, i + 1
    return total, count, seen, steps


def test_dict_items_changed_in_a_graph_loop_reach_the_callers_dict():
    static = d2s.to_static(count_until)
    for data, count in [([1.0, 2.0], 0), ([0.0, -1.0], 5), ([0.5, 0.25], 2), ([3.0, 1.0], 1)]:
        x = np.array(data, "float32")
        want, count_after, seen_after, steps_after = reference(x, count, 1.0, 3)
        for fn in (count_until, static):
            stats, box = {"count": count, "seen": 1.0}, Box()
            box.steps = 3
            alias = stats
            out = fn(rt.to_tensor(x), stats, box)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
            assert alias is stats
            assert stats == {"count": count_after, "seen": seen_after}
            assert type(stats["count"]) is int and type(stats["seen"]) is float
            assert box.steps == steps_after and type(box.steps) is int
