"""A `return` inside a tensor `while` whose counter starts as a Python number. Found by
`python -m tests.fuzz --examples 1000 --gen state --seed 10201` (4 internal errors of 1000):
the probe that learns the loop's initial values ran the body with the counter still a Python
`0`, so `if k > 5: return y` was settled False there and the return value stayed unbound;
the real trace (the counter a tensor) bound it and the converted function raised a TypeError
naming the internal `_retval`. The probe now runs again while a name stays unbound and a
Python number became a tensor. Each case: eager vs static vs a NumPy reference, with inputs
that return from inside the loop and that finish it, through one converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt

Y = np.array([0.75, 1.25, 1.25], "float32")
INPUTS = ([0.25, 0.25, 0.25], [0.75, 0.25, 1.25], [3.0, 0.0, 0.0], [7.0, 0.0, 0.0])


def nested(x, y):
    k2 = 0
    for _ in range(2):
        while k2 < rt.abs(x[0]) + 0.5:
            k2 = k2 + 1
            if k2 > 5:
                return y
    return x + k2


def nested_ref(x, y):
    k2 = 0
    for _ in range(2):
        while k2 < abs(x[0]) + 0.5:
            k2 += 1
            if k2 > 5:
                return y
    return x + k2


def single(x, y):
    k = 0
    while k < rt.abs(x[0]) + 0.5:
        k += 1
        if k > 5:
            return y * 2.0
    return x + k


def single_ref(x, y):
    k = 0
    while k < abs(x[0]) + 0.5:
        k += 1
        if k > 5:
            return y * 2.0
    return x + k


def float_counter_tuple(x, y):
    step = 0.0
    total = rt.zeros_like(x)
    while step < rt.abs(x[0]):
        step = step + 1.5
        total = total + y
        if step > 4.0:
            return total, step
    return x, step


def float_counter_tuple_ref(x, y):
    step, total = 0.0, np.zeros_like(x)
    while step < abs(x[0]):
        step += 1.5
        total = total + y
        if step > 4.0:
            return total, step
    return x, step


class Counter(rt.nn.Layer):
    """The counter on `self`, the loop in a method: the idiom of a decoding step limit."""

    def __init__(self):
        super().__init__()
        self.limit = 5

    def forward(self, x, y):
        n = 0
        while n < rt.abs(x[0]) + 0.5:
            n = n + 1
            if n > self.limit:
                return y
        return x - n


@pytest.mark.parametrize("fn, ref", [(nested, nested_ref), (single, single_ref)])
def test_return_from_tensor_while_with_python_counter(fn, ref):
    static = d2s.to_static(fn)
    y = rt.to_tensor(Y)
    for a in INPUTS:
        x = rt.to_tensor(np.array(a, "float32"))
        want = ref(np.array(a, "float32"), Y)
        np.testing.assert_allclose(fn(x, y).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(x, y).numpy(), want, rtol=1e-6)
    assert len(static.program_cache) == 1


def test_float_counter_returning_a_tuple():
    static = d2s.to_static(float_counter_tuple)
    y = rt.to_tensor(Y)
    for a in INPUTS:
        x = rt.to_tensor(np.array(a, "float32"))
        total, step = static(x, y)
        want_total, want_step = float_counter_tuple_ref(np.array(a, "float32"), Y)
        np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-6)
        assert float(step) == want_step


def test_counter_limit_on_self():
    layer = Counter()
    static = d2s.to_static(layer)
    y = rt.to_tensor(Y)
    for a in INPUTS:
        x = rt.to_tensor(np.array(a, "float32"))
        xs = np.array(a, "float32")
        n = int(np.ceil(abs(xs[0]) + 0.5))
        want = Y if n > 5 else xs - n
        np.testing.assert_allclose(layer(x, y).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(x, y).numpy(), want, rtol=1e-6)


def test_gradient_through_the_returned_value():
    """`x + k` when the loop finishes (dx = 1), `y * 2` when it returns early (dy = 2)."""
    static = d2s.to_static(single)
    for a, dx, dy in (([0.25, 0.25, 0.25], 1.0, 0.0), ([7.0, 0.0, 0.0], 0.0, 2.0)):
        x = rt.to_tensor(np.array(a, "float32"), stop_gradient=False)
        y = rt.to_tensor(Y, stop_gradient=False)
        static(x, y).sum().backward()
        for t, d in ((x, dx), (y, dy)):
            got = np.zeros(3, "float32") if t.grad is None else t.grad.numpy()
            np.testing.assert_allclose(got, np.full(3, d, "float32"))
