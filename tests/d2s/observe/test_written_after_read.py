"""A tensor written in place (`x[i] = v`, `rt.assign(v, output=x)`) after a differentiable op
read it: eager's backward through that op's result raises "modified in place" (its version
check); the converted call's result raises the same error, on the runs that wrote it, and
results computed apart from it take eager's gradient (checked against NumPy)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

INPUTS = [np.array([1.0, 2.0], "float32"), np.array([-1.0, -2.0], "float32")]


def assign_into_output(x):
    out = rt.zeros([2])
    rt.assign(x * 2, output=out)
    if out.sum() > 0:
        rt.assign(out + 1, out)  # `out + 1` read the value this overwrites
    return out


def setitem_after_a_read(x):
    buf = rt.zeros([2, 2])
    buf[0] = x * 2
    tripled = buf * 3  # reads buf before the next write
    buf[1] = x * x
    return buf, tripled


def _backward_error(t):
    with pytest.raises(RuntimeError) as info:
        (t * t).sum().backward()
    return str(info.value)


def _backward_errors(t, tries=2):
    """The messages of `tries` backward() calls through `t` in a row."""
    return [_backward_error(t) for _ in range(tries)]


@pytest.mark.parametrize("x0", INPUTS)
def test_assign_into_an_output_read_before(x0):
    static = d2s.to_static(assign_into_output)
    wrote = x0.sum() > 0
    messages = []
    for fn in (assign_into_output, static):
        x = rt.to_tensor(x0, stop_gradient=False)
        out = fn(x)
        np.testing.assert_allclose(out.numpy(), 2 * x0 + wrote, rtol=1e-6)
        if wrote:  # (eager's first backward freed the `assign` after `add`)
            messages.append(tuple(_backward_errors(out)))
            assert "'add'" in messages[-1][0] and "modified in place" in messages[-1][0]
            assert "already freed" in messages[-1][1]
        else:
            (out * out).sum().backward()
            expected = numeric_grad(lambda v: np.sum((2 * v) ** 2), x0.astype("float64"))
            np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)
    assert len(set(messages)) <= 1


@pytest.mark.parametrize("x0", INPUTS)
def test_setitem_after_a_read(x0):
    static = d2s.to_static(setitem_after_a_read)
    for fn in (setitem_after_a_read, static):
        x = rt.to_tensor(x0, stop_gradient=False)
        buf, tripled = fn(x)
        np.testing.assert_allclose(tripled.numpy(), [6 * x0, [0, 0]], rtol=1e-6)
        first, second = _backward_errors(tripled)  # (`multiply` made it: nothing was freed)
        assert "'multiply'" in first and first == second
        (buf * buf).sum().backward()  # (the writes themselves keep their gradient)
        expected = numeric_grad(lambda v: np.sum((2 * v) ** 2 + (v * v) ** 2),
                                x0.astype("float64"))
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)
