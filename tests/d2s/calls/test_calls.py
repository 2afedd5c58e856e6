"""Calls inside converted code as Paddle users write them: recursion, user Layers inside
library containers, `rt.grad`, and local names that shadow built-ins."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

nn = rt.nn


def power_tree(x, depth):
    """Recursion whose depth is a Python value: traced through, level by level."""
    if depth == 0:
        return x
    if rt.mean(x) > 0:  # a tensor condition at every level too
        return power_tree(x * 0.5, depth - 1) + 1
    return power_tree(x * 2.0, depth - 1) - 1


def power_tree_ref(x, depth):
    if depth == 0:
        return x
    if x.mean() > 0:
        return power_tree_ref(x * 0.5, depth - 1) + 1
    return power_tree_ref(x * 2.0, depth - 1) - 1


def test_direct_recursion_with_a_python_depth_converts():
    f = d2s.to_static(power_tree)
    for depth in (0, 1, 4):
        for v in (np.array([1.0, 3.0], "float32"), np.array([-2.0, 0.5], "float32")):
            np.testing.assert_allclose(f(rt.to_tensor(v), depth).numpy(),
                                       power_tree_ref(v, depth), rtol=1e-6)


class Cascade(nn.Layer):
    """A recursive method: applies its layer `n` times."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def apply(self, h, n):
        if n == 0:
            return h
        return self.apply(rt.tanh(self.fc(h)), n - 1)

    @d2s.to_static
    def forward(self, x, n=3):
        return self.apply(x, n)


def test_a_recursive_method_converts_and_trains():
    net = Cascade()
    x0 = np.random.RandomState(0).rand(2, 3).astype("float32")
    x = rt.to_tensor(x0, stop_gradient=False)
    out = net(x)
    d2s.enable_to_static(False)
    try:
        ref = net(rt.to_tensor(x0)).numpy()
    finally:
        d2s.enable_to_static(True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    out.sum().backward()

    w, b = net.fc.weight.numpy().astype("float64"), net.fc.bias.numpy().astype("float64")

    def loss(a):
        h = a
        for _ in range(3):
            h = np.tanh(h @ w + b)
        return h.sum()

    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(loss, x0.astype("float64")),
                               rtol=1e-3, atol=1e-5)


def countdown(x, n):
    if n <= 0:
        return x
    return countdown(x + 1, n - 1)


def test_recursion_whose_depth_is_a_tensor_is_a_clear_error():
    f = d2s.to_static(countdown)
    with pytest.raises(d2s.ConversionError,
                       match=r"countdown: it calls itself in a branch of a tensor condition "
                             r"\(line \d+: if n <= 0:\).*`while` loop"):
        f(rt.zeros([2]), rt.to_tensor(3))
    np.testing.assert_allclose(f(rt.zeros([2]), 3).numpy(), [3, 3])  # a Python depth works


class Gate(nn.Layer):
    def forward(self, x):
        if rt.mean(x) > 0:
            return x * 2
        return x - 1


class Residual(nn.Layer):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        y = self.inner(x)
        while rt.max(rt.abs(y)) > 10:  # a tensor loop inside a user layer
            y = y * 0.5
        return y + x


def test_user_layers_inside_library_containers_are_converted():
    rt.seed(1)
    model = nn.Sequential(nn.Linear(2, 2), Gate(), nn.Sequential(Residual(Gate()), nn.ReLU()))
    static = d2s.to_static(nn.Sequential(*model.children()))

    @d2s.to_static
    def run(x):
        return model(x)

    for v in (np.ones((1, 2), "float32"), -5 * np.ones((1, 2), "float32"),
              40 * np.ones((1, 2), "float32")):
        want = model(rt.to_tensor(v)).numpy()
        np.testing.assert_allclose(run(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
    assert len(run.program_cache) == 1


def test_user_layers_reached_through_a_layer_list_by_library_code():
    blocks = nn.LayerList([Gate(), Gate()])

    @d2s.to_static
    def run(x):
        for block in blocks:
            x = block(x)
        return x

    for v in (3.0, -3.0, 0.25):
        x = rt.full([2], v)
        want = x.numpy()
        for _ in range(2):
            want = want * 2 if want.mean() > 0 else want - 1
        np.testing.assert_allclose(run(x).numpy(), want)


def input_gradient(x):
    y = (x * x * x).sum()
    (g,) = rt.grad([y], [x])
    return g


def input_gradient_graph(x):
    y = (rt.sin(x) * x).sum()
    (g,) = rt.grad(y, x, create_graph=True)
    return g * g


def test_rt_grad_inside_converted_code():
    f = d2s.to_static(input_gradient)
    x0 = np.array([1.0, -2.0, 0.5], "float32")
    x = rt.to_tensor(x0, stop_gradient=False)
    got = f(x)
    np.testing.assert_allclose(got.numpy(), 3 * x0 ** 2, rtol=1e-6)
    assert got.stop_gradient  # create_graph=False: a constant, as in eager code
    np.testing.assert_allclose(got.numpy(), input_gradient(x).numpy(), rtol=1e-6)


def test_rt_grad_with_create_graph_trains_through_the_gradient():
    f = d2s.to_static(input_gradient_graph)
    x0 = np.array([0.3, -1.2, 2.0], "float32")
    x = rt.to_tensor(x0, stop_gradient=False)
    out = f(x)
    ref = (np.cos(x0) * x0 + np.sin(x0)) ** 2
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5)
    out.sum().backward()

    def total(a):
        return ((np.cos(a) * a + np.sin(a)) ** 2).sum()

    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(total, x0.astype("float64")),
                               rtol=1e-3, atol=1e-4)


def test_rt_grad_of_an_unused_input_needs_allow_unused():
    @d2s.to_static
    def unused(x, z):
        (gx, gz) = rt.grad([(x * 2).sum()], [x, z], allow_unused=True)
        return gx, gz is None

    gx, none = unused(rt.to_tensor([1.0, 1.0], stop_gradient=False),
                      rt.to_tensor([1.0], stop_gradient=False))
    np.testing.assert_allclose(gx.numpy(), [2, 2])
    assert none is True


def shadowed_builtins(x, print=None):
    len = lambda v: 7  # noqa: E731  (a local named like a built-in is the user's own)
    if print is not None:
        print(x)
    return x + len(x)


def test_locals_named_like_builtins_are_the_users_own():
    seen = []
    got = d2s.to_static(shadowed_builtins)(rt.ones([2]), seen.append)
    np.testing.assert_allclose(got.numpy(), [8, 8])
    assert len(seen) == 1


class Base(nn.Layer):
    def forward(self, x):
        return x + 1


class Child(Base):
    def forward(self, x):
        super = 3  # noqa: F841  (shadows nothing the method needs: super() below is Python's)
        return x * 2


class Child2(Base):
    def forward(self, x):
        return super().forward(x) * 2


def test_super_is_pythons_unless_shadowed():
    np.testing.assert_allclose(d2s.to_static(Child())(rt.ones([2])).numpy(), [2, 2])
    np.testing.assert_allclose(d2s.to_static(Child2())(rt.ones([2])).numpy(), [4, 4])


def fill_first(x):
    t = rt.to_tensor(np.zeros([3], "float32"))
    t[0] = x[0] * 2
    if rt.mean(x) > 0:
        t[1] = x[1]
    return t


def test_item_assignment_into_a_tensor_built_from_a_constant():
    f = d2s.to_static(fill_first)
    for v in ([3.0, 2.0], [-3.0, 1.0]):
        x = rt.to_tensor(v)
        np.testing.assert_allclose(f(x).numpy(), fill_first(x).numpy())
    assert len(f.program_cache) == 1


def test_a_one_element_tensor_indexes_a_python_list_eagerly():
    h = rt.to_tensor([4], dtype="int64")
    slots = [0] * 5
    slots[h // 2] = 3
    assert slots == [0, 0, 3, 0, 0]
