"""`x.name`, `x.is_leaf` and `x.grad` of traced tensors read in converted code give eager's
answers (issue 33): a computed tensor's `name` is None (never the program's internal `t3`),
`is_leaf` follows whether a gradient path reached it when it was made (`detach()`, `no_grad`,
a tensor `if` that detaches on one path: the run's answer; setting `stop_gradient` afterwards
does not change it), `.grad` of a non-leaf is None. Where one program cannot give eager's
answer (the name of an argument, `is_leaf` of an argument that needs a gradient, setting a
traced tensor's name) it is a ConversionError at the user's line; a traced value standing for
a Python number raises eager's AttributeError; the AttributeError of an attribute Tensor lacks
names no internal value."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as paddle
from tests.d2s.observe_wild.helpers import assert_same_leaves

XS = [np.array([[1.0, 2.0, 0.5]], "float32"), np.array([[-1.0, -3.0, 0.5]], "float32")]


class Head(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x):
        h = self.fc(x)
        feats = h.detach()
        if h.mean() > 0:  # truncated on the runs whose features are positive
            h = h.detach()
        with paddle.no_grad():
            frozen = self.fc(x)
        info = {"h": (h.is_leaf, h.grad is None, h.name),
                "feats": (feats.is_leaf, feats.grad, feats.name),
                "frozen": frozen.is_leaf, "x": (x.is_leaf, x.grad)}
        return h * 2.0, info


@pytest.mark.parametrize("x", XS)
def test_computed_tensors_answer_as_eager(x):
    net, converted = Head(), Head()
    converted.set_state_dict(net.state_dict())
    static = d2s.to_static(converted)  # (converts its forward in place: `net` stays eager)
    for xi in XS + [x]:  # one program, inputs taking either path of the tensor `if`
        assert_same_leaves(static(paddle.to_tensor(xi)), net(paddle.to_tensor(xi)))
    assert len(static.forward.program_cache) == 1
    info = net(paddle.to_tensor(x))[1]
    positive = bool((x @ net.fc.weight.numpy() + net.fc.bias.numpy()).mean() > 0)
    assert info["h"][0] is positive  # (NumPy: detached where the features' mean is positive)
    assert info["feats"] == (True, None, None) and info["frozen"] is True


def _delta(x, eps):
    return paddle.zeros_like(x) + eps  # a helper making a perturbation, no gradient path


def perturbation(x, w):
    delta = _delta(x, 0.1)
    delta.stop_gradient = False  # a new leaf to differentiate (PGD): eager's is_leaf stays True
    y = x * w
    y.stop_gradient = True  # made with a gradient path: eager's node stays, not a leaf
    z = (x + delta) * w
    return z.sum(), [delta.is_leaf, y.is_leaf, z.is_leaf, z.grad, y.grad,
                     hasattr(z, "is_leaf") and hasattr(y, "grad")], y


def test_stop_gradient_set_later_keeps_eager_leafness():
    w = paddle.to_tensor(np.array([1.0, 2.0, 3.0], "float32"), stop_gradient=False)
    for x in XS:
        want = perturbation(paddle.to_tensor(x[0]), w)
        got = d2s.to_static(perturbation)(paddle.to_tensor(x[0]), w)
        assert_same_leaves(got, want)
        assert want[1] == [True, False, False, None, None, True]


def stats(x, cfg):
    m = float(x.mean())  # a Python float eagerly
    return m * cfg.scale, cfg.name, hasattr(m, "is_leaf")


class Cfg:
    def __init__(self, name, scale):
        self.name, self.scale = name, scale


def test_names_of_python_objects_and_numbers_are_eager_ones():
    cfg = Cfg("run-a", 2.0)
    for x in XS:
        want = stats(paddle.to_tensor(x), cfg)
        got = d2s.to_static(stats)(paddle.to_tensor(x), cfg)
        assert_same_leaves(got, want)
        assert got[1] == "run-a"


def number_name(x):
    m = float(x.mean())
    return m.name


def missing_attribute(x):
    y = x * 2.0
    return y.device


def test_attribute_errors_are_eager_ones_without_internal_names():
    x = paddle.to_tensor(XS[0])
    for fn in (number_name, missing_attribute):
        with pytest.raises(AttributeError) as want:
            fn(x)
        with pytest.raises(AttributeError) as got:
            d2s.to_static(fn)(x)
        assert str(want.value) in str(got.value)
        assert "Variable" not in str(got.value) and "'t" not in str(got.value)


def argument_name(x):
    return x * 2.0, x.name


def argument_leaf(x):
    return x * 2.0, x.is_leaf


def renamed(x):
    y = x * 2.0
    y.name = "logits"
    return y


@pytest.mark.parametrize("fn, line, stop", [
    (argument_name, "return x * 2.0, x.name", True),
    (argument_leaf, "return x * 2.0, x.is_leaf", False),
    (renamed, 'y.name = "logits"', True),
])
def test_what_one_program_cannot_answer_is_refused_at_the_line(fn, line, stop):
    x = paddle.to_tensor(XS[0], stop_gradient=stop)
    fn(x)  # eager runs
    with pytest.raises(d2s.ConversionError) as e:
        d2s.to_static(fn)(x)
    assert line in str(e.value) and "Variable" not in str(e.value)


def test_argument_without_gradient_is_a_leaf_without_grad():
    x = paddle.to_tensor(XS[1])

    def f(x):
        y = x * 2.0
        y.clear_grad()  # (eager: its .grad, None, set to None)
        x.clear_gradient()
        return y, x.is_leaf, x.grad
    want, got = f(x), d2s.to_static(f)(x)
    assert_same_leaves(got, want)
    assert want[1:] == (True, None)


W = paddle.to_tensor(np.array([1.0, 2.0, 3.0], "float32"), stop_gradient=False)


def rolled(x, n):
    h = x  # a leaf where the loop runs no trip
    i = 0
    while i < n:
        h = h * W
        i += 1
    return h, h.is_leaf


def names_of_grown_list(x, n):
    out = []
    i = 0
    while i < n:
        out.append(x * i)
        i += 1
    return out.name


def test_leafness_after_a_graph_loop_is_the_runs():
    static = d2s.to_static(rolled)
    for n in range(3):
        x = paddle.to_tensor(XS[0][0])
        want, got = rolled(x, paddle.to_tensor(n)), static(x, paddle.to_tensor(n))
        assert_same_leaves(got, want)
        assert want[1] is (n == 0)
    x = paddle.to_tensor(XS[0][0])
    with pytest.raises(AttributeError, match="'list' object has no attribute 'name'"):
        d2s.to_static(names_of_grown_list)(x, paddle.to_tensor(2))
