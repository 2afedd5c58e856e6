"""`assert cond, f"... {value} ..."` where the message holds tensors computed by the converted
code (`x.min().item()`, a tensor, a loop counter): the assert is checked when the program runs
and, failing, raises eager's message (was a ConversionError: an f-string of a tensor), also
inside a graph loop; a passing assert prints nothing. PYTEST_DONT_REWRITE (the eager asserts
keep Python's messages)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def safe_sqrt(x):
    assert x.min() >= 0, f"negative input: {x.min().item()} in {x.shape[0]} values"
    return x.sqrt()


def check_rows(x, limit):
    i = 0
    while i < limit:
        assert x[i].sum() > 0, f"row {i} sums to {x[i].sum()}"
        i += 1
    return x * 2


def _outcome(fn, *args):
    try:
        return fn(*args).numpy()
    except AssertionError as e:
        return f"AssertionError: {e}"


@pytest.mark.parametrize("x", [[1.0, 4.0], [-1.0, 4.0], [9.0, -2.5, 1.0]])
def test_item_and_shape_in_the_message(x):
    x = np.asarray(x, np.float32)
    static = d2s.to_static(safe_sqrt)
    eager = _outcome(safe_sqrt, rt.to_tensor(x))
    got = _outcome(static, rt.to_tensor(x))
    if x.min() >= 0:
        np.testing.assert_allclose(got, np.sqrt(x))
        np.testing.assert_allclose(got, eager)
    else:
        assert eager == f"AssertionError: negative input: {float(x.min())} in {len(x)} values"
        assert got == eager


@pytest.mark.parametrize("rows, limit", [([[1.0, 2.0], [3.0, 4.0]], 2),
                                         ([[1.0, 2.0], [-3.0, 1.0]], 2),
                                         ([[1.0, 2.0], [-3.0, 1.0]], 1)])
def test_tensor_and_counter_in_a_graph_loop(rows, limit):
    x = np.asarray(rows, np.float32)
    n = rt.to_tensor(limit, dtype="int64")
    static = d2s.to_static(check_rows)
    eager = _outcome(check_rows, rt.to_tensor(x), n)
    got = _outcome(static, rt.to_tensor(x), n)
    if isinstance(eager, str):
        assert eager.startswith("AssertionError: row 1 sums to Tensor(")
        assert got == eager
    else:
        np.testing.assert_allclose(got, eager)
