"""An attribute whose type a graph loop changes (issue 35, item 6): `o.total = 0` before a
loop over a tensor range, a tensor inside it. As for a local name, the number fills a tensor
of the body's type on entry; only where the loop ran zero times *and* the value is read does
the program raise (a TypeError naming the attribute and the loop: eager code would read the
number, which the program cannot give with that shape). It was refused at conversion for
every input. Eager vs static vs NumPy over 0, 1 and 3 trips in one program; the gradient
against finite differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


class Meter:
    pass


def accumulate(meter, x, n):
    meter.total = 0
    meter.steps = 0.0
    for i in range(n):
        meter.total = meter.total + x * x
        meter.steps = meter.steps + x.mean()
    return meter.total * 2.0, meter.steps


def test_an_attribute_that_becomes_a_tensor_in_a_graph_loop():
    static = d2s.to_static(accumulate, full_graph=True)
    xv = np.array([1.5, -2.0], "float32")
    for k in (1, 3):
        for fn in (accumulate, static):
            meter = Meter()
            x = rt.to_tensor(xv, stop_gradient=False)
            total, steps = fn(meter, x, rt.to_tensor(k))
            np.testing.assert_allclose(total.numpy(), 2.0 * k * xv * xv, rtol=1e-6)
            np.testing.assert_allclose(float(steps), k * xv.mean(), rtol=1e-6)
            np.testing.assert_allclose(meter.total.numpy(), k * xv * xv, rtol=1e-6)
            total.sum().backward()
            want = numeric_grad(lambda v, k=k: float(2.0 * k * (v * v).sum()),
                                xv.astype("float64"))
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)


def test_zero_trips_raise_only_where_the_value_is_read():
    static = d2s.to_static(accumulate, full_graph=True)
    x = rt.to_tensor([1.5, -2.0], stop_gradient=False)
    assert accumulate(Meter(), x, rt.to_tensor(0)) == (0.0, 0.0)  # eager: the numbers
    meter = Meter()
    with pytest.raises(TypeError, match=r"'meter.total' is the Python number 0 before a loop"):
        static(meter, x, rt.to_tensor(0))
    total, _ = static(meter, x, rt.to_tensor(2))  # the same program, where the loop ran
    np.testing.assert_allclose(total.numpy(), [9.0, 16.0])
    assert len(static.program_cache) == 1
