"""A comprehension's own variable is not the function's name of the same spelling (Python 3
scopes it to the comprehension): a graph loop that binds `a` to values whose shape the loop
changes, followed by `[... for a in out]`, converts (breadth fuzzer, seed 20302: it was an
UndefinedNameError saying 'a' is first bound inside the loop with a shape unknown before it)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def running_prefix_sums(x, n):
    out = [x]
    h = x
    for i in range(n):
        a = h[:i + 1]  # (a shape the loop changes)
        h = h + a.sum()
        out.append(h)
    sizes = [a.shape[0] for a in out]  # `a` here is the comprehension's own
    return h + len([a * 2 for a in out]), len(sizes)


def _reference(x, n):
    out, h = [x], x
    for i in range(n):
        h = h + h[:i + 1].sum()
        out.append(h)
    return h + len(out), len(out)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_comprehension_variable_named_as_a_loop_variable(n):
    static = d2s.to_static(running_prefix_sums)
    x = np.arange(3, dtype="float32")
    want = _reference(x.astype(np.float64), n)
    for fn in (running_prefix_sums, static):
        got, count = fn(rt.to_tensor(x), rt.to_tensor(n))
        np.testing.assert_allclose(got.numpy(), want[0], rtol=1e-6)
        assert count == want[1] and type(count) is int
        assert got.dtype == rt.float32


def test_one_program_for_every_count():
    static = d2s.to_static(running_prefix_sums)
    x = rt.to_tensor(np.arange(3, dtype="float32"))
    for n in (0, 2, 4):
        static(x, rt.to_tensor(n))
    assert len(static.program_cache) == 1
