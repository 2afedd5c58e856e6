"""A `for` over `range(n_tensor)` with an early `return` under a tensor `if`, whose body
updates state on an object passed in (`o.stats["count"] += 1` in an inner tensor `while`): the
loop carries `o.stats` by name, and d2s's own loop test (`not returned`) set it. Traced only
where the range had items left, that setting was refused as a change "in an operand of
and/or evaluated only when a tensor operand before it decides so" (15 of 1000 refusals of
observe seed 18003). Eager, converted and a NumPy reference agree, with the dict's count."""
import numpy as np

import d2s
import runtime as rt


class Stats:
    def __init__(self):
        self.stats = {"count": 0}


def scan(x, y, o):
    h = x * 1.0
    for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        h = h + i
        k = rt.zeros([])
        while k < x[0]:
            k = k + 1.0
            o.stats["count"] += 1
        if y[0] > x[1]:
            return h
    return h


def reference(x, y):
    h, count = x.copy(), 0
    for i in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        h = h + i
        count += max(0, int(np.ceil(x[0])))
        if y[0] > x[1]:
            return h, count
    return h, count


def test_early_return_in_range_loop_with_state_carried_by_name():
    static = d2s.to_static(scan)
    cases = [([1.25, 1.25, 2.75], [-1.25, 0.75, -2.75]),  # two trips, no return
             ([2.5, 1.75, -0.25], [2.25, -1.25, -2.75]),  # returns on the first trip
             ([-2.75, -1.5, 0.0], [0.0, 0.0, 0.0])]       # no trips
    for xs, ys in cases:
        x, y = np.array(xs, "float32"), np.array(ys, "float32")
        want, count = reference(x, y)
        eager_o, static_o = Stats(), Stats()
        eager = scan(rt.to_tensor(x), rt.to_tensor(y), eager_o)
        got = static(rt.to_tensor(x), rt.to_tensor(y), static_o)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        np.testing.assert_array_equal(got.numpy(), eager.numpy())
        assert got.dtype == eager.dtype and got.stop_gradient == eager.stop_gradient
        assert static_o.stats == eager_o.stats == {"count": count}
        assert type(static_o.stats["count"]) is int
