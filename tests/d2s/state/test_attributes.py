"""Attributes, closure cells and globals after a call hold Tensors, never Variables."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import t, variables_reachable


class Box:
    pass


def set_attr(x, o):
    o.t = x * 2.0
    if rt.mean(x) > 0:
        o.u = x + 1.0
    else:
        o.u = x - 1.0
    return x


def test_attributes_of_an_object_passed_in_are_written_back():
    sf = d2s.to_static(set_attr)
    o = Box()
    for v in ([1.0, 2.0], [-1.0, -2.0]):
        sf(t(v), o)
        x = np.asarray(v, np.float32)
        np.testing.assert_allclose(o.t.numpy(), x * 2.0)
        np.testing.assert_allclose(o.u.numpy(), x + 1.0 if x.mean() > 0 else x - 1.0)
    assert len(sf.program_cache) == 1
    assert variables_reachable(o) == []


class Counter(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = rt.nn.Linear(2, 2)
        self.count = rt.to_tensor(0)
        self.cache = {"last": rt.zeros([1, 2])}

    def forward(self, x):
        h = self.lin(x)
        if rt.mean(h) > 0:
            self.count += 1
            self.cache["last"] = h
        else:
            self.cache["last"] = -h
        return h


def test_layer_attributes_and_containers_under_tensor_if():
    eager = Counter()
    static = d2s.to_static(Counter())
    static.set_state_dict(eager.state_dict())
    xs = [[[1.0, 2.0]], [[-1.0, -2.0]], [[3.0, 1.0]]]
    for v in xs:
        with rt.no_grad():
            eager(t(v))
            static(t(v))
        assert int(static.count) == int(eager.count)
        np.testing.assert_allclose(static.cache["last"].numpy(), eager.cache["last"].numpy(),
                                   rtol=1e-6)
    assert variables_reachable(static, static.forward) == []


def make_accumulator():
    acc = rt.zeros([2])

    def step(x):
        nonlocal acc
        if rt.sum(x) > 0:
            acc = acc + x
        else:
            acc = acc - 1.0
        return acc * 1.0

    return step


def test_nonlocal_cell_rebound_under_tensor_if():
    eager, static = make_accumulator(), d2s.to_static(make_accumulator())
    for v in ([1.0, 2.0], [-3.0, 1.0], [0.5, 0.5]):
        np.testing.assert_allclose(static(t(v)).numpy(), eager(t(v)).numpy())
    cell = static.dygraph_function.__closure__[0].cell_contents
    assert isinstance(cell, rt.Tensor)
    assert variables_reachable(static.dygraph_function) == []


LAST = None


def set_global(x):
    global LAST
    if rt.mean(x) > 0:
        LAST = x * 2.0
    else:
        LAST = x * 3.0
    return x + 0.0


def test_global_rebound_under_tensor_if():
    sf = d2s.to_static(set_global)
    for v in ([1.0, 2.0], [-1.0, -2.0]):
        sf(t(v))
        x = np.asarray(v, np.float32)
        np.testing.assert_allclose(LAST.numpy(), x * (2.0 if x.mean() > 0 else 3.0))


def bump_number(x, o):
    if rt.mean(x) > 0:
        o.n += 1
    return x + 0.0


def test_python_number_changed_under_a_tensor_if_counts_as_in_eager():
    # o.n is program state: fed as a number, incremented by the cond, written back as an int
    sf = d2s.to_static(bump_number)
    o, ref = Box(), Box()
    o.n = ref.n = 0
    for v in ([1.0], [-1.0], [2.0], [3.0], [-4.0], [5.0]):
        np.testing.assert_allclose(sf(t(v), o).numpy(), bump_number(t(v), ref).numpy())
        assert o.n == ref.n and type(o.n) is int
    assert ref.n == 4 and len(sf.program_cache) == 1
