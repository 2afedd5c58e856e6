"""Found by the observe-sets generator (seed 30001, 2 internal errors in 560) at the end of
session 20: a list of Python floats that an inner graph loop grows with an int too (its items
become pairs of value and Python type), read by `len()` in the outer graph loop's body after
the inner loop, raised an internal "Variable 't36' (array<f64[2]>) was created inside a
cond/while/switch_case block" (issue 35's internal errors): the inner loop made the pairs
array in its body and the object it changes in place kept it. Fixed: the object takes the
pairs value before the inner loop (`Loop.renew`); tests/d2s/breadth35/
test_number_kinds_in_nested_blocks.py covers the class."""
import numpy as np

import d2s
import runtime as rt


def grow(x):
    h = x * 1.0
    lengths = [0.5]
    outer = rt.zeros([])
    while outer < x[0] * 2.0:
        outer = outer + 1.0
        inner = rt.zeros([])
        while inner < x[0] * 2.0:
            inner = inner + 1.0
            lengths.append(1.5)
            lengths.append(-1)
        h = h + len(lengths)
    return h, len(lengths), sum(lengths)


def test_mixed_numbers_grown_by_an_inner_loop_and_counted_by_the_outer():
    static = d2s.to_static(grow)
    for xv in ([0.25, 1.25], [1.25, -2.0], [-1.0, 0.0]):
        x = rt.to_tensor(np.array(xv, "float32"))
        want, got = grow(x), static(x)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
        assert got[1:] == want[1:]
        assert [type(v) for v in got[1:]] == [type(v) for v in want[1:]]
