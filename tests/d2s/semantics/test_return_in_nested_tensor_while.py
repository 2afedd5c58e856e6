"""Found by `python -m tests.fuzz --examples 1000 --gen state --seed 10201` (4 internal errors
of 1000): a `return` inside a tensor `while` nested in a Python `for`, the loop's counter a
Python number. Eager returns; the converted function raises a TypeError that names the
internal `_retval` ("a Python Undefined changed inside a loop whose condition is a tensor").
Present before this session's changes too (6e3afc6). A strict xfail until it is fixed: the
fix makes this test fail until the marker is removed."""
import numpy as np
import pytest

import d2s
import runtime as rt


def nested(x, y):
    k2 = 0
    for _ in range(2):
        while k2 < rt.abs(x[0]) + 0.5:
            k2 = k2 + 1
            if k2 > 5:
                return y
    return x + k2


@pytest.mark.xfail(strict=True, raises=TypeError,
                   reason="return inside a tensor while nested in a Python for: '_retval' is "
                          "refused as a Python value changed in the loop (not fixed yet)")
def test_return_in_tensor_while_nested_in_python_for():
    static = d2s.to_static(nested)
    for a in ([0.25, 0.25, 0.25], [0.75, 0.25, 1.25], [7.0, 0.0, 0.0]):
        x = rt.to_tensor(np.array(a, "float32"))
        y = rt.to_tensor(np.array([0.75, 1.25, 1.25], "float32"))
        want = nested(x, y).numpy()
        np.testing.assert_array_equal(static(x, y).numpy(), want)
