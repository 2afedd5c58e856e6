"""`insert` and `clear` on a list that is a tensor array inside a graph loop (by its own name
and through `self.`); `remove(value)` compares tensors with `==` and is refused clearly."""
import numpy as np
import pytest

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t


def beam(x):
    outs = [x]
    i = 0
    while i < rt.sum(x):
        outs.insert(0, x * (i + 1.0))      # at the front
        outs.insert(-1, x - i)             # before the last (negative, from the end)
        if i == 2:
            outs.clear()                   # on one path of a tensor if inside the loop
        i += 1
    return rt.stack(outs).sum(0) * len(outs)


def ref_beam(x):
    outs, i = [x], 0
    while i < x.sum():
        outs.insert(0, x * (i + 1.0))
        outs.insert(-1, x - i)
        if i == 2:
            outs.clear()
        i += 1
    return np.stack(outs).sum(0) * len(outs)


def test_insert_at_constant_positions_and_clear_in_a_graph_loop():
    check(beam, ref_beam, [([1.0, 0.5],), ([2.0, 1.5],), ([0.2, 0.1],), ([3.0, 1.0],)])


def at_tensor_index(x):
    outs = [x]
    i = 0
    while i < rt.sum(x):
        outs.insert(i, x * (i + 1.0))      # an integer tensor index (the loop counter)
        i += 1
    first = outs[0]
    outs.clear()
    outs.append(first)
    return rt.stack(outs).sum(0) + outs[-1]


def ref_at_tensor_index(x):
    outs = [x] + [x * (i + 1.0) for i in range(int(np.ceil(x.sum())))]
    return outs[0] * 2


def test_insert_at_a_tensor_index_then_clear_after_the_loop():
    check(at_tensor_index, ref_at_tensor_index, [([1.0, 0.5],), ([0.0, 0.0],), ([3.0, 1.0],)])


def test_gradient_through_insert_matches_finite_differences():
    sf = d2s.to_static(beam)
    x0 = np.array([1.0, 0.8], np.float64)
    x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
    (sf(x) * t([1.0, 2.0])).sum().backward()
    want = numeric_grad(lambda v: (ref_beam(v) * np.array([1.0, 2.0])).sum(), x0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


class Queue(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.q = []

    def forward(self, x):
        self.q = [x]
        i = 0
        while i < rt.sum(x):
            self.q.insert(0, x * (i + 1.0))  # through self.: the attribute is the array
            i += 1
        return rt.stack(self.q).sum(0) + self.q[0]


def test_insert_through_an_attribute_in_a_graph_loop():
    eager, static = Queue(), Queue()
    sf = d2s.to_static(static)
    for v in ([1.0, 0.5], [2.0, 1.5], [-1.0, 0.0]):
        n = int(np.ceil(sum(v))) if sum(v) > 0 else 0
        q = [np.asarray(v, np.float32) * (k + 1.0) for k in reversed(range(n))] + [
            np.asarray(v, np.float32)]
        want = np.stack(q).sum(0) + q[0]
        np.testing.assert_allclose(eager(t(v)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(sf(t(v)).numpy(), want, rtol=1e-5)
        assert [a.numpy().tolist() for a in static.q] == [a.tolist() for a in q]


def removes(x):
    outs = [x, x * 2.0]
    i = 0
    while i < rt.sum(x):
        outs.append(x * 3.0)
        outs.remove(x * 3.0)
        i += 1
    return rt.stack(outs).sum(0)


def test_remove_by_value_is_refused_naming_the_line():
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(removes)(t([1.0, 1.0]))
    msg = str(info.value)
    assert "remove() of a tensor from a list of tensors" in msg
    assert "outs.remove(x * 3.0)" in msg and "pop it by its index" in msg.lower()
