"""rt.nn: the Layer base, containers, initializers and every non-recurrent layer, against
NumPy references with float64 gradient checks on tiny shapes."""
from __future__ import annotations

import numpy as np
import pytest
from layer_gradcheck import check_grads

import runtime as rt
from runtime import nn
from runtime.nn import initializer as I


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2, bias_attr=False)
        self.register_buffer("steps", rt.to_tensor(np.zeros([1], np.float32)))

    def forward(self, x):
        return self.fc2(rt.tanh(self.fc1(x)))


# ---- Layer base ---------------------------------------------------------------------------

def test_parameter_names_and_structured_names():
    model = MLP()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight"]
    prefix = model.fc1.full_name()
    assert prefix.startswith("linear_")
    assert model.fc1.weight.name == f"{prefix}.w_0"
    assert model.fc1.bias.name == f"{prefix}.b_0"
    assert len({p.name for p in model.parameters()}) == 3
    # Paddle's order: a layer's own parameters and buffers, then its sublayers'
    assert list(model.state_dict()) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in model.named_sublayers()] == ["fc1", "fc2"]
    assert list(model.children()) == [model.fc1, model.fc2]
    assert next(n for n, _ in model.named_parameters(prefix="m")) == "m.fc1.weight"
    assert model.parameters(include_sublayers=False) == []


def test_setattr_registers_and_replaces():
    layer = nn.Layer()
    layer.w = layer.create_parameter([2, 3])
    layer.sub = nn.Linear(2, 2)
    layer.cache = rt.ones([2])  # a plain Tensor: non-persistable buffer, as in Paddle
    assert "w" in layer._parameters and "sub" in layer._sub_layers
    assert "cache" in layer._buffers and "cache" not in layer.state_dict()
    layer.sub = None
    assert layer.sub is None and layer.parameters() == [layer.w]
    with pytest.raises(TypeError, match="parameter 'w'"):
        layer.w = 3
    del layer.w
    assert layer.parameters() == []
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = layer.missing


def test_forgotten_super_init_is_a_clear_error():
    class Bad(nn.Layer):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"super\(\).__init__"):
        Bad()


def test_create_parameter_defaults_and_attrs():
    layer = nn.Layer()
    w = layer.create_parameter([4, 5])
    b = layer.create_parameter([5], is_bias=True)
    assert w.dtype == "float32" and not w.stop_gradient and w.persistable
    assert np.all(b.numpy() == 0)
    limit = np.sqrt(6 / 9)
    assert np.abs(w.numpy()).max() <= limit and np.abs(w.numpy()).max() > limit / 3
    c = layer.create_parameter([2], "float64", default_initializer=I.Constant(2.0))
    assert c.dtype == "float64" and c.numpy().tolist() == [2.0, 2.0]
    frozen = layer.create_parameter([2], attr=rt.ParamAttr(name="frozen", trainable=False))
    assert frozen.name == "frozen" and frozen.stop_gradient
    assert layer.create_parameter([2], attr=False) is None


def test_state_dict_round_trip_keeps_objects():
    a, b = MLP(), MLP()
    weight_b = b.fc1.weight
    missing, unexpected = b.set_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    assert b.fc1.weight is weight_b
    x = rt.to_tensor(np.random.rand(2, 3).astype("float32"))
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    state = {k: v.numpy() for k, v in a.state_dict().items()}
    state["extra"] = np.zeros(1)
    del state["steps"]
    missing, unexpected = b.set_state_dict(state)
    assert missing == ["steps"] and unexpected == ["extra"]


def test_set_state_dict_errors_name_the_key():
    model = MLP()
    before = model.fc1.bias.numpy().copy()
    bad = {"fc1.bias": np.ones(4, np.float32), "fc2.weight": np.zeros([4, 3], np.float32)}
    with pytest.raises(ValueError, match=r"'fc2.weight' has shape \[4, 3\].*\[4, 2\]"):
        model.set_state_dict(bad)
    np.testing.assert_array_equal(model.fc1.bias.numpy(), before)  # nothing half-applied
    with pytest.raises(TypeError, match="'fc1.bias' has dtype float64"):
        model.set_state_dict({"fc1.bias": np.ones(4)})


def test_set_state_dict_by_parameter_name():
    a, b = MLP(), MLP()
    by_name = {p.name: p.numpy() for p in a.parameters()}
    by_name = {bp.name: by_name[ap.name] for ap, bp in zip(a.parameters(), b.parameters())}
    b.set_state_dict(by_name, use_structured_name=False)
    np.testing.assert_array_equal(a.fc2.weight.numpy(), b.fc2.weight.numpy())


def test_train_eval_apply():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Identity()))
    model.eval()
    assert not any(layer.training for layer in model.sublayers(include_self=True))
    model.train()
    assert all(layer.training for layer in model.sublayers(include_self=True))
    seen = []
    model.apply(lambda layer: seen.append(type(layer).__name__))
    assert seen == ["Linear", "Identity", "Sequential", "Sequential"]


def test_hooks_modify_and_remove():
    fc = nn.Linear(2, 2, weight_attr=I.Constant(1.0))
    calls = []
    pre = fc.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 2,))
    post = fc.register_forward_post_hook(
        lambda layer, inputs, out: calls.append(inputs[0].numpy().tolist()) or out + 1)
    x = rt.to_tensor([[1.0, 2.0]])
    assert fc(x).numpy().tolist() == [[7.0, 7.0]]
    assert calls == [[[2.0, 4.0]]]
    pre.remove()
    post.remove()
    assert fc(x).numpy().tolist() == [[3.0, 3.0]]
    assert len(calls) == 1


def test_to_dtype_keeps_parameter_objects():
    model = MLP()
    weight = model.fc1.weight
    model.to(dtype="float64")
    assert model.fc1.weight is weight and weight.dtype == "float64"
    assert model.steps.dtype == "float64" and model._dtype == "float64"
    assert model(rt.to_tensor(np.ones([1, 3]))).dtype == "float64"
    assert model.fc1.create_parameter([1]).dtype == "float64"
    with pytest.raises(ValueError, match="floating"):
        model.to(dtype="int32")


def test_repr_like_paddle():
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Identity()))
    assert repr(model) == ("Sequential(\n"
                           "  (0): Linear(in_features=2, out_features=3, dtype=float32)\n"
                           "  (1): Sequential(\n"
                           "    (0): Identity()\n"
                           "  )\n"
                           ")")


# ---- containers ---------------------------------------------------------------------------

def test_sequential_indexing_and_names():
    seq = nn.Sequential(("a", nn.Linear(2, 3)), ("b", nn.Linear(3, 1)))
    assert [n for n, _ in seq.named_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]
    assert seq[0] is seq["a"] and seq[-1] is seq["b"]
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1
    with pytest.raises(IndexError):
        _ = seq[2]
    assert seq(rt.ones([4, 2])).shape == [4, 1]


def test_layerlist_and_layerdict():
    blocks = nn.LayerList([nn.Linear(2, 2) for _ in range(3)])
    first = blocks[0]
    blocks.insert(0, nn.Linear(2, 2))
    assert blocks[1] is first and len(blocks) == 4
    del blocks[0]
    assert blocks[0] is first
    assert [n for n, _ in blocks.named_parameters()][-1] == "2.bias"
    heads = nn.LayerDict({"x": nn.Linear(2, 1)})
    heads["y"] = nn.Identity()
    assert list(heads) == ["x", "y"] and "y" in heads
    assert heads.pop("x").weight.shape == [2, 1] and len(heads) == 1


def test_parameterlist_and_shared_parameters():
    owner = nn.Layer()
    shared = owner.create_parameter([2])
    plist = nn.ParameterList([shared, owner.create_parameter([3])])
    plist.append(shared)
    assert len(plist) == 3 and len(plist.parameters()) == 2  # shared once
    assert list(plist.state_dict()) == ["0", "1"]


# ---- initializers -------------------------------------------------------------------------

@pytest.mark.parametrize("init, mean, std, bound", [
    (I.Normal(1.0, 2.0), 1.0, 2.0, None),
    (I.Uniform(-3.0, 1.0), -1.0, 4 / np.sqrt(12), (-3.0, 1.0)),
    (I.TruncatedNormal(0.0, 1.0), 0.0, 0.8796, (-2.0, 2.0)),
    (I.XavierUniform(), 0.0, np.sqrt(6 / 300) / np.sqrt(3), (-np.sqrt(6 / 300),) * 2),
    (I.XavierNormal(), 0.0, np.sqrt(2 / 300), None),
    (I.KaimingUniform(), 0.0, np.sqrt(6 / 100) / np.sqrt(3), (-np.sqrt(6 / 100),) * 2),
    (I.KaimingNormal(), 0.0, np.sqrt(2 / 100), None),
])
def test_initializer_statistics(init, mean, std, bound):
    values = init.generate([100, 200], "float64")
    assert values.dtype == np.float64
    assert abs(values.mean() - mean) < 4 * std / np.sqrt(values.size)
    assert abs(values.std() - std) < 0.02 * std
    if bound is not None:
        lo, hi = bound
        assert values.min() >= min(lo, -abs(hi)) and values.max() <= abs(hi)


def test_initializer_conv_fans_and_seed():
    if not hasattr(rt, "seed"):
        pytest.skip("rt.seed (runtime/ops/random.py) is not there yet")
    rt.seed(7)
    a = I.KaimingNormal().generate([64, 8, 3, 3], "float32")
    rt.seed(7)
    b = I.KaimingNormal().generate([64, 8, 3, 3], "float32")
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32
    assert abs(a.std() - np.sqrt(2 / 72)) < 0.05 * np.sqrt(2 / 72)
    assert I.compute_fans([64, 8, 3, 3]) == (72, 576)


def test_initializer_on_existing_parameter():
    fc = nn.Linear(2, 3)
    I.Constant(0.25)(fc.weight)
    assert np.all(fc.weight.numpy() == 0.25)
    I.Assign(np.arange(3.0))(fc.bias)
    assert fc.bias.numpy().tolist() == [0.0, 1.0, 2.0]


# ---- Linear -------------------------------------------------------------------------------

def test_linear_value_and_grads():
    fc = nn.Linear(3, 2).to(dtype="float64")
    x = np.random.rand(4, 3)
    got = fc(rt.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, x @ fc.weight.numpy() + fc.bias.numpy(), rtol=1e-12)
    check_grads(fc, [np.random.rand(2, 5, 3)], fc.parameters())
