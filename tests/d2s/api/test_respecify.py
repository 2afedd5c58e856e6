"""`to_static(already_converted, input_spec=new)`: the new spec is taken (for functions and
Layers) where it agrees with the old one, else a ValueError names the argument that differs."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import InputSpec


def clipped_norm(x):
    n = rt.sqrt(rt.sum(x * x, axis=-1, keepdim=True))
    if rt.max(n) > 1.0:
        return x / rt.maximum(n, rt.ones_like(n))
    return x


def reference(x):
    n = np.sqrt((x * x).sum(-1, keepdims=True))
    return x / np.maximum(n, 1.0) if n.max() > 1.0 else x


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 2)

    def forward(self, x):
        return clipped_norm(self.fc(x))


BATCHES = [np.full([3, 4], 2.0, "float32"), np.full([3, 4], 0.01, "float32")]


def test_a_converted_function_takes_the_new_spec():
    dynamic = d2s.to_static(clipped_norm, input_spec=[InputSpec([None, 4], "float32")])
    fixed = d2s.to_static(dynamic, input_spec=[InputSpec([3, 4], "float32", name="feats")])
    assert fixed is not dynamic
    assert fixed.concrete_program.inputs[0].shape == [3, 4]
    assert fixed.inputs[0].name == "feats"
    assert dynamic.concrete_program.inputs[0].shape == [-1, 4]  # the old one is unchanged
    for x in BATCHES:
        np.testing.assert_allclose(fixed(rt.to_tensor(x)).numpy(), reference(x), rtol=1e-6)
    assert d2s.to_static(fixed) is fixed  # no new spec: the same StaticFunction


def test_a_spec_given_first_when_re_wrapping():
    plain = d2s.to_static(clipped_norm)
    specified = d2s.to_static(plain, input_spec=[InputSpec([None, 4], "float32")])
    assert specified.concrete_program.inputs[0].shape == [-1, 4]


def test_a_converted_layer_takes_the_new_spec_and_still_rolls_back():
    net = Head()
    d2s.to_static(net, input_spec=[InputSpec([None, 4], "float32")])
    first = net.forward
    d2s.to_static(net, input_spec=[InputSpec([3, 4], "float32")])
    assert net.forward is not first
    assert net.forward.concrete_program.inputs[0].shape == [3, 4]
    w, b = net.fc.weight.numpy(), net.fc.bias.numpy()
    for x in BATCHES:
        np.testing.assert_allclose(net(rt.to_tensor(x)).numpy(), reference(x @ w + b),
                                   rtol=1e-5)
    assert d2s.to_static(net) is net and net.forward is not first  # no spec: kept
    net.forward.rollback()
    assert "forward" not in net.__dict__


@pytest.mark.parametrize("new, why", [
    ([InputSpec([None, 5], "float32")], "argument 0 had 4 in dim 1, now 5"),
    ([InputSpec([None, 4], "float64")], "argument 0 was float32, now float64"),
    ([InputSpec([4], "float32")], "argument 0 had 2 dims, now 1"),
])
def test_specs_that_disagree_raise(new, why):
    dynamic = d2s.to_static(clipped_norm, input_spec=[InputSpec([None, 4], "float32")])
    with pytest.raises(ValueError, match="clipped_norm was converted with input_spec") as e:
        d2s.to_static(dynamic, input_spec=new)
    assert why in str(e.value) and "dygraph_function" in str(e.value)
    net = Head()
    d2s.to_static(net, input_spec=[InputSpec([None, 4], "float32")])
    with pytest.raises(ValueError, match=why):
        d2s.to_static(net, input_spec=new)
