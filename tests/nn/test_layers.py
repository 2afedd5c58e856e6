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
    assert layer.parameters() == [] and not hasattr(layer, "w")
    layer.add_parameter("w", layer.create_parameter([1]))
    layer.add_parameter("w", layer.create_parameter([2]))  # re-adding a parameter replaces it
    assert layer.w.shape == [2] and len(layer.parameters()) == 1
    with pytest.raises(KeyError, match="already exists"):
        layer.add_parameter("cache", layer.create_parameter([1]))
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
    by_name = {bp.name: by_name[ap.name]
               for ap, bp in zip(a.parameters(), b.parameters(), strict=True)}
    b.set_state_dict(by_name, use_structured_name=False)
    np.testing.assert_array_equal(a.fc2.weight.numpy(), b.fc2.weight.numpy())


def test_deepcopy_gives_an_independent_layer():
    import copy

    model = MLP()
    clone = copy.deepcopy(model)
    assert clone.fc1 is not model.fc1 and clone.fc1.weight is not model.fc1.weight
    np.testing.assert_array_equal(clone.fc1.weight.numpy(), model.fc1.weight.numpy())
    clone._sub_layers["fc1"] = nn.Identity()  # registries stay in sync with attributes
    assert isinstance(clone.fc1, nn.Identity) and isinstance(model.fc1, nn.Linear)
    assert [n for n, _ in clone.named_parameters()] == ["fc2.weight"]


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
    assert not hasattr(heads, "x") and heads.y is heads["y"]


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
    rt.seed(7)
    a = I.KaimingNormal().generate([64, 8, 3, 3], "float32")
    rt.seed(7)
    b = I.KaimingNormal().generate([64, 8, 3, 3], "float32")
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32
    assert abs(a.std() - np.sqrt(2 / 72)) < 0.05 * np.sqrt(2 / 72)
    assert I.compute_fans([64, 8, 3, 3]) == (72, 576)


def test_global_initializer_ranks_below_param_attr():
    I.set_global_initializer(I.Constant(0.5), I.Constant(-1.0))
    try:
        conv = nn.Conv2D(2, 2, 1)  # overrides the layer's own default (Normal)
        fc = nn.Linear(2, 2, weight_attr=I.Constant(3.0))  # ParamAttr still wins
    finally:
        I.set_global_initializer(None)
    assert np.all(conv.weight.numpy() == 0.5) and np.all(conv.bias.numpy() == -1.0)
    assert np.all(fc.weight.numpy() == 3.0) and np.all(fc.bias.numpy() == -1.0)
    assert not np.all(nn.Linear(2, 2).weight.numpy() == 0.5)
    with pytest.raises(TypeError, match="weight_init"):
        I.set_global_initializer("xavier")


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


# ---- convolution and pooling --------------------------------------------------------------

def np_conv2d(x, w, b, stride, pad, dil, groups):
    n = x.shape[0]
    out_c, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (x.shape[2] - dil * (kh - 1) - 1) // stride + 1
    ow = (x.shape[3] - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, out_c, oh, ow))
    per = out_c // groups
    for o in range(out_c):
        g = o // per
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * stride:i * stride + dil * (kh - 1) + 1:dil,
                          j * stride:j * stride + dil * (kw - 1) + 1:dil]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b[None, :, None, None])


@pytest.mark.parametrize("stride, pad, dil, groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 1)])
def test_conv2d_vs_numpy(stride, pad, dil, groups):
    conv = nn.Conv2D(4, 6, 3, stride=stride, padding=pad, dilation=dil, groups=groups)
    assert conv.weight.shape == [6, 4 // groups, 3, 3]
    conv.to(dtype="float64")
    x = np.random.randn(2, 4, 7, 6)
    want = np_conv2d(x, conv.weight.numpy(), conv.bias.numpy(), stride, pad, dil, groups)
    np.testing.assert_allclose(conv(rt.to_tensor(x)).numpy(), want, rtol=1e-10, atol=1e-12)


def test_conv_default_init_and_grads():
    conv = nn.Conv2D(8, 32, 3)
    std = conv.weight.numpy().std()
    assert abs(std - np.sqrt(2 / 72)) < 0.15 * np.sqrt(2 / 72)  # Paddle: N(0, 2/fan_in)
    assert np.all(conv.bias.numpy() == 0)
    small = nn.Conv2D(2, 2, 2, stride=1, padding=1, groups=2).to(dtype="float64")
    check_grads(small, [np.random.randn(1, 2, 3, 3)], small.parameters())


def test_conv1d_and_transpose_vs_numpy():
    conv1 = nn.Conv1D(3, 4, 3, padding=1, bias_attr=False).to(dtype="float64")
    assert conv1.bias is None and conv1.weight.shape == [4, 3, 3]
    x = np.random.randn(2, 3, 5)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    want = np_conv2d(xp[:, :, None], conv1.weight.numpy()[:, :, None], None, 1, 0, 1, 1)[:, :, 0]
    np.testing.assert_allclose(conv1(rt.to_tensor(x)).numpy(), want, rtol=1e-10)

    up = nn.Conv2DTranspose(3, 2, 3, stride=2, padding=1).to(dtype="float64")
    assert up.weight.shape == [3, 2, 3, 3]
    x = np.random.randn(1, 3, 3, 4)
    full = np.zeros((1, 2, 2 * 2 + 3, 3 * 2 + 3))
    w = up.weight.numpy()
    for i in range(3):
        for j in range(4):
            full[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.einsum(
                "nc,cokl->nokl", x[:, :, i, j], w)
    want = full[:, :, 1:-1, 1:-1] + up.bias.numpy()[None, :, None, None]
    got = up(rt.to_tensor(x))
    assert got.shape == [1, 2, 5, 7]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    check_grads(up, [x[:, :, :2, :2]], up.parameters())


def test_pooling_vs_numpy():
    x = np.random.randn(2, 3, 6, 5)
    got = nn.MaxPool2D(2, stride=2)(rt.to_tensor(x)).numpy()
    want = x[:, :, :6, :4].reshape(2, 3, 3, 2, 2, 2).max(axis=(3, 5))
    np.testing.assert_allclose(got, want)
    got = nn.AvgPool2D(3, stride=1, padding=1)(rt.to_tensor(x)).numpy()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (1, 1), (1, 1)))
    sums = sum(padded[:, :, i:i + 6, j:j + 5] for i in range(3) for j in range(3))
    counts = sum(ones[:, :, i:i + 6, j:j + 5] for i in range(3) for j in range(3))
    np.testing.assert_allclose(got, sums / counts, rtol=1e-6)  # exclusive: padding not counted
    got = nn.AdaptiveAvgPool2D((2, 1))(rt.to_tensor(x)).numpy()
    want = np.stack([x[:, :, 0:3].mean(axis=(2, 3)), x[:, :, 3:6].mean(axis=(2, 3))], -1)
    np.testing.assert_allclose(got, want[..., None], rtol=1e-6)
    check_grads(nn.MaxPool2D(2), [np.random.randn(1, 1, 4, 4)])


def test_one_dimensional_pools():
    x = np.random.randn(2, 3, 7)
    got = nn.MaxPool1D(2)(rt.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, x[:, :, :6].reshape(2, 3, 3, 2).max(-1))
    got = nn.AvgPool1D(3, stride=2, padding=1, exclusive=False)(rt.to_tensor(x)).numpy()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    np.testing.assert_allclose(got, np.stack([padded[..., i:i + 3].mean(-1)
                                              for i in range(0, 7, 2)], -1), rtol=1e-12)
    got = nn.AdaptiveAvgPool1D(1)(rt.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, x.mean(-1, keepdims=True), rtol=1e-12)
    img = np.random.randn(1, 2, 4, 6)
    got = nn.AdaptiveMaxPool2D((2, 3))(rt.to_tensor(img)).numpy()
    np.testing.assert_array_equal(got, img.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5)))


def test_pad_upsample_and_conv_padding_modes():
    x = np.random.randn(1, 2, 3, 4)
    got = nn.Pad2D([1, 0, 2, 1], mode="reflect")(rt.to_tensor(x)).numpy()
    np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 0)), "reflect"))
    got = nn.Upsample(scale_factor=2)(rt.to_tensor(x)).numpy()
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(2, axis=3))
    conv = nn.Conv2D(2, 3, 3, padding=1, padding_mode="circular").to(dtype="float64")
    want = np_conv2d(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), "wrap"), conv.weight.numpy(),
                     conv.bias.numpy(), 1, 0, 1, 1)
    np.testing.assert_allclose(conv(rt.to_tensor(x)).numpy(), want, rtol=1e-10)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2D(2, 3, 3, padding_mode="mirror")


# ---- normalisation ------------------------------------------------------------------------

def test_batchnorm_train_updates_running_stats_eval_uses_them():
    bn = nn.BatchNorm2D(3).to(dtype="float64")
    assert list(bn.state_dict()) == ["weight", "bias", "_mean", "_variance"]
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    x = np.random.randn(4, 3, 2, 2) * 2 + 1
    mu, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    got = bn(rt.to_tensor(x)).numpy()
    want = (x - mu[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * mu, rtol=1e-12)
    np.testing.assert_allclose(bn._variance.numpy(), 0.9 + 0.1 * var, rtol=1e-12)
    bn.eval()
    y = np.random.randn(2, 3, 2, 2)
    want = (y - 0.1 * mu[:, None, None]) / np.sqrt(0.9 + 0.1 * var[:, None, None] + 1e-5)
    np.testing.assert_allclose(bn(rt.to_tensor(y)).numpy(), want, rtol=1e-9)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * mu, rtol=1e-12)  # eval: unchanged
    check_grads(bn, [np.random.randn(3, 3, 1, 2)], bn.parameters())


def test_batchnorm_training_backward():
    """Training updates the running stats in place after the op used them; the backward
    pass must still work (their values do not enter the gradient)."""
    bn = nn.BatchNorm2D(3).to(dtype="float64")
    check_grads(bn, [np.random.randn(3, 3, 1, 2)], bn.parameters(), rtol=1e-4, atol=1e-6)


def test_batchnorm1d_channels_last_and_frozen_affine():
    bn = nn.BatchNorm1D(4, data_format="NLC", weight_attr=False).to(dtype="float64")
    assert bn.weight.stop_gradient and np.all(bn.weight.numpy() == 1)
    x = np.random.randn(2, 5, 4)
    mu, var = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
    np.testing.assert_allclose(bn(rt.to_tensor(x)).numpy(), (x - mu) / np.sqrt(var + 1e-5),
                               rtol=1e-9)
    with pytest.raises(ValueError, match="data_format"):
        nn.BatchNorm1D(4, data_format="NCHW")


def test_legacy_batchnorm_with_act_and_3d():
    bn = nn.BatchNorm(3, act="relu").to(dtype="float64")
    x = np.random.randn(4, 3, 5)
    mu, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    want = np.maximum((x - mu[:, None]) / np.sqrt(var[:, None] + 1e-5), 0)
    np.testing.assert_allclose(bn(rt.to_tensor(x)).numpy(), want, rtol=1e-9, atol=1e-12)
    frozen = nn.BatchNorm(3, is_test=True)
    frozen(rt.to_tensor(_f32(4, 3, 5)))
    assert np.all(frozen._mean.numpy() == 0)  # is_test: running statistics, no update
    bn3 = nn.BatchNorm3D(2).to(dtype="float64")
    x = np.random.randn(2, 2, 2, 3, 2)
    mu, var = x.mean(axis=(0, 2, 3, 4)), x.var(axis=(0, 2, 3, 4))
    want = (x - mu[:, None, None, None]) / np.sqrt(var[:, None, None, None] + 1e-5)
    np.testing.assert_allclose(bn3(rt.to_tensor(x)).numpy(), want, rtol=1e-9, atol=1e-12)


def test_layernorm_groupnorm_vs_numpy():
    ln = nn.LayerNorm([3, 4]).to(dtype="float64")
    ln.weight.set_value(np.random.rand(3, 4))
    x = np.random.randn(2, 3, 4)
    mu, var = x.mean(axis=(1, 2), keepdims=True), x.var(axis=(1, 2), keepdims=True)
    want = (x - mu) / np.sqrt(var + 1e-5) * ln.weight.numpy() + ln.bias.numpy()
    np.testing.assert_allclose(ln(rt.to_tensor(x)).numpy(), want, rtol=1e-9)
    check_grads(ln, [x[:1]], ln.parameters())

    gn = nn.GroupNorm(2, 4).to(dtype="float64")
    gn.bias.set_value(np.arange(4.0))
    x = np.random.randn(2, 4, 3)
    g = x.reshape(2, 2, 6)
    normed = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    want = normed.reshape(2, 4, 3) + np.arange(4.0)[None, :, None]
    np.testing.assert_allclose(gn(rt.to_tensor(x)).numpy(), want, rtol=1e-9)
    check_grads(gn, [x[:1]], gn.parameters())


# ---- embedding, activations, dropout, flatten ---------------------------------------------

def test_embedding_padding_idx():
    emb = nn.Embedding(5, 3, padding_idx=-1).to(dtype="float64")
    assert emb.weight.shape == [5, 3] and np.all(emb.weight.numpy()[4] == 0)
    ids = np.array([[0, 4], [2, 0]])
    got = emb(rt.to_tensor(ids))
    np.testing.assert_array_equal(got.numpy(), emb.weight.numpy()[ids])
    got.backward(rt.to_tensor(np.ones([2, 2, 3])))
    grad = emb.weight.grad.numpy()
    assert grad[0].tolist() == [2.0] * 3 and grad[4].tolist() == [0.0] * 3
    assert grad[2].tolist() == [1.0] * 3 and grad[1].tolist() == [0.0] * 3


@pytest.mark.parametrize("layer, ref", [
    (nn.ReLU(), lambda v: np.maximum(v, 0)),
    (nn.LeakyReLU(0.2), lambda v: np.where(v > 0, v, 0.2 * v)),
    (nn.Sigmoid(), lambda v: 1 / (1 + np.exp(-v))),
    (nn.Tanh(), np.tanh),
    (nn.Softmax(axis=0), lambda v: np.exp(v) / np.exp(v).sum(0)),
    (nn.Silu(), lambda v: v / (1 + np.exp(-v))),
    (nn.Swish(), lambda v: v / (1 + np.exp(-v))),
    (nn.Hardswish(), lambda v: v * np.clip(v + 3, 0, 6) / 6),
    (nn.GELU(), lambda v: v * 0.5 * (1 + np.vectorize(__import__("math").erf)(v / np.sqrt(2)))),
    (nn.ELU(0.5), lambda v: np.where(v > 0, v, 0.5 * (np.exp(v) - 1))),
    (nn.Mish(), lambda v: v * np.tanh(np.log1p(np.exp(v)))),
    (nn.LogSigmoid(), lambda v: -np.log1p(np.exp(-v))),
    (nn.Hardsigmoid(), lambda v: np.clip(v / 6 + 0.5, 0, 1)),
    (nn.Hardtanh(-0.5, 0.5), lambda v: np.clip(v, -0.5, 0.5)),
])
def test_activation_layers(layer, ref):
    x = np.random.randn(3, 4)
    np.testing.assert_allclose(layer(rt.to_tensor(x)).numpy(), ref(x), rtol=1e-7, atol=1e-12)


def test_flatten_and_dropout_eval():
    x = rt.to_tensor(np.random.randn(2, 3, 4, 5))
    assert nn.Flatten()(x).shape == [2, 60]
    assert nn.Flatten(0, 1)(x).shape == [6, 4, 5]
    drop = nn.Dropout(0.9)
    drop.eval()
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())


def test_dropout_train_scales_kept_values():
    drop = nn.Dropout(0.5)
    y = drop(rt.to_tensor(np.ones([1000])))
    kept = y.numpy() != 0
    assert 350 < kept.sum() < 650 and np.all(y.numpy()[kept] == 2.0)


# ---- losses -------------------------------------------------------------------------------

def test_losses_vs_numpy():
    logits = np.random.randn(5, 4)
    label = np.array([0, 3, 1, 1, 2])
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    ce = nn.CrossEntropyLoss()(rt.to_tensor(logits), rt.to_tensor(label))
    np.testing.assert_allclose(float(ce), -logp[np.arange(5), label].mean(), rtol=1e-9)
    nll = nn.NLLLoss(reduction="sum")(rt.to_tensor(logp), rt.to_tensor(label))
    np.testing.assert_allclose(float(nll), -logp[np.arange(5), label].sum(), rtol=1e-9)
    a, b = np.random.randn(3, 2), np.random.randn(3, 2)
    np.testing.assert_allclose(float(nn.MSELoss()(rt.to_tensor(a), rt.to_tensor(b))),
                               ((a - b) ** 2).mean(), rtol=1e-9)
    np.testing.assert_allclose(nn.L1Loss("none")(rt.to_tensor(a), rt.to_tensor(b)).numpy(),
                               np.abs(a - b), rtol=1e-9)
    target = (np.random.rand(3, 2) > 0.5).astype(np.float64)
    bce = nn.BCEWithLogitsLoss()(rt.to_tensor(a), rt.to_tensor(target))
    p = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(float(bce), -(target * np.log(p) + (1 - target)
                                            * np.log(1 - p)).mean(), rtol=1e-9)
    prob = 1 / (1 + np.exp(-a))
    bce = nn.BCELoss(reduction="sum")(rt.to_tensor(prob), rt.to_tensor(target))
    np.testing.assert_allclose(float(bce), -(target * np.log(prob) + (1 - target)
                                            * np.log(1 - prob)).sum(), rtol=1e-9)
    d = a - b
    huber = np.where(np.abs(d) < 0.5, 0.5 * d ** 2, 0.5 * np.abs(d) - 0.125)
    np.testing.assert_allclose(nn.SmoothL1Loss("none", delta=0.5)(
        rt.to_tensor(a), rt.to_tensor(b)).numpy(), huber, rtol=1e-9)
    q = np.exp(logp[:2])
    kl = nn.KLDivLoss("batchmean")(rt.to_tensor(logp[2:4]), rt.to_tensor(q))
    np.testing.assert_allclose(float(kl), (q * (np.log(q) - logp[2:4])).sum() / 2, rtol=1e-9)
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("avg")
    check_grads(lambda x: nn.CrossEntropyLoss()(x, rt.to_tensor(label)), [logits])


# ---- gradient clipping --------------------------------------------------------------------

def test_clip_grad_by_global_norm():
    owner = nn.Layer()
    a, b, skip = (owner.create_parameter([n]) for n in (2, 3, 2))
    skip.need_clip = False
    ga, gb, gs = np.array([3.0, 0.0], np.float32), np.full(3, 4 / np.sqrt(3), np.float32), \
        np.array([100.0, 0.0], np.float32)
    pairs = [(a, rt.to_tensor(ga)), (b, rt.to_tensor(gb)), (skip, rt.to_tensor(gs)), (b, None)]
    out = nn.ClipGradByGlobalNorm(1.0)(pairs)
    assert [p for p, _ in out] == [a, b, skip, b] and out[3][1] is None
    np.testing.assert_allclose(out[0][1].numpy(), ga / 5, rtol=1e-6)
    np.testing.assert_allclose(out[1][1].numpy(), gb / 5, rtol=1e-6)
    np.testing.assert_array_equal(out[2][1].numpy(), gs)
    small = nn.ClipGradByGlobalNorm(10.0)([(a, rt.to_tensor(ga))])
    np.testing.assert_allclose(small[0][1].numpy(), ga, rtol=1e-6)  # under the norm: kept
    half = nn.ClipGradByGlobalNorm(1.0)([(a, rt.to_tensor(np.full(2, 300.0, np.float16)))])
    assert half[0][1].dtype == "float16"  # the sum of squares (180000) is taken in float32
    np.testing.assert_allclose(half[0][1].numpy().astype(float), [0.7071] * 2, rtol=1e-3)


def test_clip_grad_by_norm_and_value():
    owner = nn.Layer()
    a, b = owner.create_parameter([2]), owner.create_parameter([2])
    pairs = [(a, rt.to_tensor([3.0, 4.0])), (b, rt.to_tensor([0.3, -0.4]))]
    by_norm = nn.ClipGradByNorm(1.0)(pairs)
    np.testing.assert_allclose(by_norm[0][1].numpy(), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(by_norm[1][1].numpy(), [0.3, -0.4], rtol=1e-6)
    by_value = nn.ClipGradByValue(0.35)(pairs)
    np.testing.assert_allclose(by_value[1][1].numpy(), [0.3, -0.35], rtol=1e-6)


# ---- static mode: the same layers traced into a program -----------------------------------

def _flat(out):
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _static_run(layer, specs, feeds):
    """Build one program with `specs` ([shape, dtype] with None dims), run it on each feed."""
    main = rt.static.Program()
    with rt.static.program_guard(main):
        xs = [rt.static.data(f"x{i}", shape, dtype) for i, (shape, dtype) in enumerate(specs)]
        outs = _flat(layer(*xs))
    exe = rt.static.Executor()
    return [exe.run(main, feed={f"x{i}": a for i, a in enumerate(arrays)}, fetch_list=outs)
            for arrays in feeds]


def _f32(*shape):
    return np.random.randn(*shape).astype("float32")


class SelfAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiHeadAttention(8, 2)

    def forward(self, x, mask):
        return self.mha(x, attn_mask=mask)


STATIC_CASES = [
    (lambda: nn.Linear(3, 4), [([None, 3], "float32")], lambda b: [_f32(b, 3)]),
    (lambda: nn.Conv2D(3, 4, 3, stride=2, padding=1), [([None, 3, 5, 5], "float32")],
     lambda b: [_f32(b, 3, 5, 5)]),
    (lambda: nn.BatchNorm2D(3), [([None, 3, 2, 2], "float32")], lambda b: [_f32(b, 3, 2, 2)]),
    (lambda: nn.GroupNorm(2, 4), [([None, 4, 3], "float32")], lambda b: [_f32(b, 4, 3)]),
    (lambda: nn.Embedding(6, 3, padding_idx=0), [([None, 2], "int64")],
     lambda b: [np.random.randint(0, 6, (b, 2))]),
    (lambda: nn.Sequential(nn.MaxPool2D(2), nn.AdaptiveAvgPool2D(1), nn.Flatten()),
     [([None, 3, 4, 4], "float32")], lambda b: [_f32(b, 3, 4, 4)]),
    (lambda: nn.LSTM(3, 4, num_layers=2, direction="bidirect"), [([None, 5, 3], "float32")],
     lambda b: [_f32(b, 5, 3)]),
    (lambda: SelfAttention(), [([None, None, 8], "float32"),
                                           ([None, 1, 1, None], "bool")],
     lambda b: [_f32(b, 3, 8), np.random.rand(b, 1, 1, 3) > 0.3]),
    (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, normalize_before=True),
                                   2), [([None, None, 8], "float32")], lambda b: [_f32(b, 3, 8)]),
]


@pytest.mark.parametrize("make, specs, feed", STATIC_CASES, ids=[
    "linear", "conv2d", "batchnorm", "groupnorm", "embedding", "pools", "lstm", "attention",
    "transformer"])
def test_layers_static_equals_eager_with_dynamic_batch(make, specs, feed):
    layer = make()
    layer.eval()
    feeds = [feed(2), feed(3)]
    for arrays, got in zip(feeds, _static_run(layer, specs, feeds), strict=True):
        want = _flat(layer(*[rt.to_tensor(a) for a in arrays]))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)


def test_batchnorm_static_training_updates_the_shared_buffers():
    eager_bn, static_bn = nn.BatchNorm2D(3), nn.BatchNorm2D(3)
    x = _f32(4, 3, 2, 2) * 2 + 1
    want = eager_bn(rt.to_tensor(x)).numpy()
    (got,), = _static_run(static_bn, [([None, 3, 2, 2], "float32")], [[x]])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(static_bn._mean.numpy(), eager_bn._mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(static_bn._variance.numpy(), eager_bn._variance.numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("make", [lambda: nn.GRU(3, 4, direction="bidirect"),
                                  lambda: nn.LSTM(3, 4, num_layers=2)], ids=["gru", "lstm"])
def test_rnn_static_with_unknown_time_steps(make):
    """An unknown number of steps becomes one while op; lengths 4 and 6 run the same
    program, with per-sequence lengths."""
    net = make()
    feeds = [[_f32(2, 4, 3), np.array([4, 2])], [_f32(3, 6, 3), np.array([1, 6, 3])]]

    class WithLengths(nn.Layer):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, x, lengths):
            return self.net(x, sequence_length=lengths)

    runs = _static_run(WithLengths(), [([None, None, 3], "float32"), ([None], "int64")], feeds)
    for (x, lengths), got in zip(feeds, runs):
        want = _flat(net(rt.to_tensor(x), sequence_length=rt.to_tensor(lengths)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)


def test_rnn_static_gradients_with_unknown_time_steps():
    """Backward through the while op equals eager backward."""
    net = nn.GRU(3, 4, direction="bidirect").to(dtype="float64")
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [None, None, 3], "float64")
        out, _ = net(x)
        loss = (out * out).sum()
        grads = rt.static.gradients([loss], [net.weight_hh_l0, net.weight_ih_l0_reverse])
    feed = np.random.randn(2, 5, 3)
    got = rt.static.Executor().run(main, feed={"x": feed}, fetch_list=grads)
    out, _ = net(rt.to_tensor(feed))
    (out * out).sum().backward()
    np.testing.assert_allclose(got[0], net.weight_hh_l0.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(got[1], net.weight_ih_l0_reverse.grad.numpy(), rtol=1e-10)
