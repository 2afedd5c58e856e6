"""A value that is a Python number on some runs (`num = 1.5`, then `num = num + x[0] * 0.5`
under a tensor `if`) returned beside a tensor from an early `return` inside a `try` (whose
other path cannot be the `if`'s else branch, so the return value is a placeholder there):
eager returns the float 1.5 on the runs that left it a number; the converted call returned a
float32 tensor (the return's `if` dropped the number flag of an item of the returned tuple).
Found by the observe fuzzer (seed 38201). Eager vs static vs NumPy through one program."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def tracked(x, y):
    num = 1.5
    if rt.sum(x) > 1.0:
        num = num + x[0] * 0.5
    try:
        if y[0] > x[1]:
            return x * 2.0, num
    finally:
        pass
    return x, num


INPUTS = (([1.25, 2.25, 0.25], [0.25, 0.75, 1.25]),
          ([-0.25, -2.75, -1.25], [-1.25, 2.25, 2.25]),
          ([-2.75, 0.25, -2.75], [0.25, -0.25, 0.75]))


def _ref(x, y):
    num = 1.5 + x[0] * 0.5 if x.sum() > 1.0 else 1.5
    return (x * 2.0 if y[0] > x[1] else x), num


def test_the_number_comes_back_as_eagers():
    static = d2s.to_static(tracked)
    for xs, ys in INPUTS:
        x, y = (rt.to_tensor(np.asarray(v, "float32")) for v in (xs, ys))
        want, got = tracked(x, y), static(x, y)
        assert_same_leaves(got, want)
        ref = _ref(np.asarray(xs, "float32"), np.asarray(ys, "float32"))
        np.testing.assert_allclose(got[0].numpy(), ref[0])
        np.testing.assert_allclose(float(got[1]), float(ref[1]), rtol=1e-6)
    assert len(static.program_cache) == 1
    assert type(static(*(rt.to_tensor(np.asarray(v, "float32")) for v in INPUTS[1]))[1]) \
        is float
