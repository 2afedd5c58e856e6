"""An early `return` under a tensor `if` in a loop that became a graph loop, returning a list
the code drained before the loop (`pending.pop()` until empty) beside tensors: the loop's
first look at its body marks the empty list as one whose items are not seen yet, and the
returned tuple held that mark on one branch and the plain list on the other (an internal
"cond: the branches return different structures", found by the state fuzzer). Inputs that
return early get eager's values; the others pop the empty list again, and get eager's
IndexError."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def refine(x, y):
    h = x * 1.0
    pending = [x * 0.5, y * 1.0]
    pending.pop(0)
    h = h + pending.pop()
    for _ in range(2):
        if rt.sum(h) > 1.0:
            return h, pending
        h = h + pending.pop()
    return h, pending


X = [np.array([2.25, 1.25, 2.25], "float32"), np.array([-1.25, -0.25, -1.25], "float32")]
Y = np.array([0.75, 0.75, 1.25], "float32")


def test_returns_or_raises_as_eager_through_one_program():
    static = d2s.to_static(refine)
    early = X[0] + Y  # (h after the pops: its sum is over 1, so it returns at once)
    for x in X:
        args = (rt.to_tensor(x), rt.to_tensor(Y))
        try:
            want = refine(*args)
        except IndexError as e:
            with pytest.raises(IndexError, match=str(e)):
                static(*args)
            continue
        got = static(*args)
        assert_same_leaves(got, want)
        np.testing.assert_allclose(got[0].numpy(), early)
        assert got[1] == []
    assert len(static.program_cache) == 1
