"""A list the body of a graph loop rebinds to a new list of another length (`res = [v + a
for v in table]` in a `for` over `range` of a tensor, Paddle's test_loop.py idiom): the state
became a tensor array on the first trace, then the body's new list was seen as another list to
make an array of on every trace ("d2s bug: loop state kept widening"). The body's list joins
the array the state already is; the length follows the run (eager's list before the loop when
it runs zero times)."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def scaled_table(n, offset):
    table = [1.0, 2.0, 3.0]
    res = [0.0]
    seen = 0
    for j in range(n):
        res = [v * offset + j for v in table]
        seen = seen + 1
    return res, seen


def rows_kept(x, n):
    rows = [x]
    for j in range(n):
        rows = [x * j, x + j]
    return rt.stack(rows).sum(0)


def _reference_table(n, offset):
    if n == 0:
        return [0.0], 0
    return [v * offset + (n - 1) for v in (1.0, 2.0, 3.0)], n


def test_number_list_rebound_longer_follows_the_run():
    static = d2s.to_static(scaled_table)
    for n in (3, 0, 1):
        args = (rt.to_tensor([n]), 2.0)
        want = scaled_table(*args)
        got = static(*args)
        ref, count = _reference_table(n, 2.0)
        assert [float(v) for v in got[0]] == ref == [float(v) for v in want[0]]
        assert len(got[0]) == len(want[0])
        assert int(got[1]) == count
    assert len(static.program_cache) == 1


def test_tensor_list_rebound_longer_follows_the_run():
    static = d2s.to_static(rows_kept)
    x = np.array([1.0, -2.0], "float32")
    for n in (2, 0):
        args = (rt.to_tensor(x), rt.to_tensor([n]))
        want = rows_kept(*args)
        ref = x if n == 0 else x * (n - 1) + x + (n - 1)
        got = static(*args)
        assert_same_leaves(got, want)
        np.testing.assert_allclose(got.numpy(), ref)
    assert len(static.program_cache) == 1
