"""A `while ... else` flag bound on some paths only before a graph `while` whose body binds
it again before any read (found by the breadth fuzzer, seed 35202): the loop carries the
flag only for the zero-trip case, so entering the loop does not read it. It raised
`UnboundLocalError: ... 'hit'` from the program where eager code runs. Eager vs static vs
NumPy over inputs that skip the first `if`, break, run without a break, and run zero
times, through one program."""
import numpy as np

import d2s
import runtime as rt


def scan(x, limit):
    h = x * 1.0
    if rt.sum(h) > 1.0:
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            if rt.sum(h) > 4.0:
                hit = 1
                break
        else:
            hit = 0
        h = h + hit
    k = rt.zeros([])
    while k < limit:
        k = k + 1.0
        while k < limit:
            k = k + 1.0
            if rt.sum(h) > 4.0:
                hit = 1
                break
        else:
            hit = 0
        h = h + hit
    else:  # noqa: PLW0120  (the fuzzer's shape: no break, an else)
        hit = 0
    return h + hit


def reference(x, limit):
    h = x.astype("float32")
    if h.sum() > 1.0:
        h = h + (1 if h.sum() > 4.0 else 0)
    k = 0.0
    while k < limit:
        k += 1.0
        hit = 0
        while k < limit:
            k += 1.0
            if h.sum() > 4.0:
                hit = 1
                break
        h = h + hit
    return h


CASES = [
    ([-0.25, -1.25, -0.25], 2.0),   # first `if` skipped: the flag unbound before the loop
    ([2.75, 1.25, 0.25], 3.0),      # the first loop breaks, the inner loops break
    ([0.25, 0.5, 0.5], 4.0),        # no break anywhere: the `else` binds the flag
    ([-0.25, -1.25, -0.25], 0.0),   # zero trips: the loop's `else` binds it
    ([2.75, 1.25, 0.25], 0.0),      # zero trips after the first `if`
]


def test_flag_rebound_by_a_later_while_else():
    static = d2s.to_static(scan)
    for values, limit in CASES:
        x, lim = rt.to_tensor(values), rt.to_tensor(limit)
        want = reference(np.array(values, "float32"), limit)
        eager, got = scan(x, lim), static(x, lim)
        np.testing.assert_allclose(eager.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert (got.dtype, got.stop_gradient) == (eager.dtype, eager.stop_gradient)
    assert len(static.program_cache) == 1


def scan_for(x, n):
    h = x * 1.0
    if rt.sum(h) > 1.0:
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            if rt.sum(h) > 4.0:
                hit = 1
                break
        else:
            hit = 0
        h = h + hit
    for i in range(n):                    # a graph `for` over a tensor range
        for j in range(n):
            if rt.sum(h) + i > 4.0:
                hit = 1
                break
        else:
            hit = 0
        h = h + hit
    else:
        hit = 0
    return h + hit


def reference_for(x, n):
    h = x.astype("float32")
    if h.sum() > 1.0:
        h = h + (1 if h.sum() > 4.0 else 0)
    for i in range(n):
        hit = 1 if n > 0 and h.sum() + i > 4.0 else 0
        h = h + hit
    return h


def test_flag_rebound_by_a_later_for_else_over_a_tensor_range():
    static = d2s.to_static(scan_for)
    for values in ([-0.25, -1.25, -0.25], [2.75, 1.25, 0.25], [0.25, 0.5, 0.5]):
        for n in (0, 1, 2):
            x, nn = rt.to_tensor(values), rt.to_tensor(n)
            want = reference_for(np.array(values, "float32"), n)
            eager, got = scan_for(x, nn), static(x, nn)
            np.testing.assert_allclose(eager.numpy(), want, rtol=1e-6)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
            assert (got.dtype, got.stop_gradient) == (eager.dtype, eager.stop_gradient)
    assert len(static.program_cache) == 1
