"""A `for` target that a closure reads (`fns.append(lambda: v + v)` in the body, a helper
defined before the loop that reads the loop variable) is the user function's one variable:
each trip rebinds it, so every lambda made in the loop sees the last item once the loop is
over, and a helper called in the body sees the current one. The converted body had its own
parameter per trip, so each lambda kept its trip's item (silently `[2, 4]` where eager
gives `[4, 4]`: AutoGraph's skipped `for_with_lambda_iter`), and a helper read a variable
the converted loop never set."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


def doubled_later(values):
    fns = []
    for v in values:
        fns.append(lambda: v + v)
    return [f() for f in fns]


def bound_now_and_later(values):
    fns = []
    for k, v in enumerate(values):
        fns.append(lambda: v * k)      # late binding: the last (k, v)
        fns.append(lambda v=v: v * 1)  # bound now: this trip's v
    return [f() for f in fns]


def helper_reads_the_counter(x, n):
    def scaled():
        return x[i] * 2.0

    total = rt.zeros([])
    for i in range(n):
        if x[i] > 0:
            total = total + scaled()
    return total


def _values(out):
    return [int(v) for v in out]


def test_lambdas_made_in_an_unrolled_loop_see_the_last_item():
    for fn in (doubled_later, bound_now_and_later):
        converted = d2s.to_static(fn)
        for data in ([1, 2], [3, 5, 7]):
            x = rt.to_tensor(np.asarray(data, np.int64))
            eager, static = fn(x), converted(x)
            assert len(static) == len(eager)
            assert _values(static) == _values(eager)
            assert all(s.dtype == e.dtype for s, e in zip(static, eager, strict=True))
        last = data[-1]
        if fn is doubled_later:
            assert _values(static) == [2 * last] * 3
        else:
            assert _values(static) == [v for d in data for v in (last * 2, d)]


def test_a_helper_reads_the_counter_of_a_graph_loop():
    converted = d2s.to_static(helper_reads_the_counter)
    data = np.asarray([1.0, -2.0, 3.0, 4.0], np.float32)
    for n in (0, 2, 3, 4):
        want = sum(2.0 * v for v in data[:n] if v > 0)
        eager = helper_reads_the_counter(rt.to_tensor(data), rt.to_tensor(n))
        static = converted(rt.to_tensor(data), rt.to_tensor(n))
        assert static.dtype == eager.dtype and static.shape == eager.shape
        np.testing.assert_allclose(static.numpy(), eager.numpy())
        np.testing.assert_allclose(static.numpy(), want)
    assert len(converted.program_cache) == 1
