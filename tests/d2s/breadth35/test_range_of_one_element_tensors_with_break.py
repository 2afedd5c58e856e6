"""`for i in range(b)` where `b` is a one-element tensor of shape [1] (Paddle's
test_break_continue.py idiom: `b = paddle.full([1], 3, "int64")`), with a `break` or
`continue` under a tensor condition: the loop's own test joined `i < b` (shape [1]) with the
`break` flag (shape []) and was refused as "`a and b` used as a value ... with an operand of
another dtype or shape", pointing at the `for` line where the user wrote no `and`. The bound
is the Python int eager's `range` takes (rank 0); a bound of several elements raises eager's
ValueError."""
import numpy as np
import pytest

import d2s
import runtime as rt


def counted(x, b):
    a = rt.full([1], 0, dtype="int64")
    for i in range(b):
        if a <= 4:
            x += 1
            a += 1
            continue
        else:
            x += 10
            break
    return x, a


def summed(x, b):
    s = rt.zeros([])
    for i in range(1, b):
        if s > 5:
            break
        s = s + i * x.sum()
    return s


def _ref_counted(x, b):
    a = 0
    for _ in range(b):
        if a <= 4:
            x, a = x + 1, a + 1
        else:
            x = x + 10
            break
    return x, np.array([a])


def _ref_summed(x, b):
    s = np.float32(0)
    for i in range(1, b):
        if s > 5:
            break
        s = s + i * x.sum()
    return s


@pytest.mark.parametrize("b", [0, 3, 8])
def test_break_and_continue_in_a_range_of_a_one_element_tensor(b):
    static_counted, static_summed = d2s.to_static(counted), d2s.to_static(summed)
    x = np.array([0.5], "float32")
    bound = lambda: rt.full([1], b, "int64")
    for fn, static, ref in ((counted, static_counted, _ref_counted(x, b)),
                            (summed, static_summed, _ref_summed(x, b))):
        want = fn(rt.to_tensor(x), bound())
        got = static(rt.to_tensor(x), bound())
        want, got, ref = [v if isinstance(v, tuple) else (v,) for v in (want, got, ref)]
        for w, g, r in zip(want, got, ref):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-6)


def test_a_bound_of_several_elements_raises_eagers_error():
    with pytest.raises(ValueError, match="only one-element tensors convert to Python int"):
        d2s.to_static(summed)(rt.to_tensor([0.5]), rt.to_tensor([2, 3]))
