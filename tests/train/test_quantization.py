"""QAT: fake-quant ops on the integer grid with straight-through gradients, moving-average
scales, quantize / convert of Linear and Conv2D models, skip_quant, and training that stays
close to float accuracy."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
import runtime.nn.functional as F
from runtime import quantization as Q


def _t(*shape, seed=0, stop_gradient=True, scale=1.0):
    rng = np.random.default_rng(seed)
    return rt.to_tensor((rng.standard_normal(shape) * scale).astype(np.float32),
                        stop_gradient=stop_gradient)


def _assert_on_grid(values, scale, bits=8):
    n = 2 ** (bits - 1) - 1
    k = values / np.where(scale > 0, scale, 1) * n
    np.testing.assert_allclose(k, np.round(k), atol=2e-3)
    assert np.abs(np.round(k)).max() <= n


# ---- the ops --------------------------------------------------------------------------------

def test_abs_max_is_on_the_grid_and_close():
    x = _t(50, scale=3.0)
    out, scale = Q.fake_quant_dequant_abs_max(x)
    xs = x.numpy()
    assert float(scale) == pytest.approx(np.abs(xs).max())
    _assert_on_grid(out.numpy(), float(scale))
    assert np.abs(out.numpy() - xs).max() <= float(scale) / 127 / 2 + 1e-6
    assert len(np.unique(Q.fake_quant_dequant_abs_max(x, bit_length=2)[0].numpy())) <= 3
    zeros = Q.fake_quant_dequant_abs_max(rt.zeros([3]))[0]
    np.testing.assert_array_equal(zeros.numpy(), np.zeros(3))  # scale 0 gives 0, not nan


@pytest.mark.parametrize("axis", [0, 1])
def test_channel_wise_scales_per_channel(axis):
    w = _t(6, 5, seed=1)
    w_np = w.numpy()
    w_np[:, 2] *= 10  # one big column: with per-tensor scales it would swamp the others
    w = rt.to_tensor(w_np)
    out, scales = Q.fake_channel_wise_quant_dequant_abs_max(w, quant_axis=axis)
    want = np.abs(w_np).max(axis=1 - axis)
    np.testing.assert_allclose(scales.numpy(), want, rtol=1e-6)
    shape = (-1, 1) if axis == 0 else (1, -1)
    _assert_on_grid(out.numpy(), want.reshape(shape))
    err = np.abs(out.numpy() - w_np) / want.reshape(shape)
    assert err.max() <= 0.5 / 127 + 1e-6


def test_moving_average_abs_max_statistics():
    scale, accum, state = (rt.to_tensor(np.array([v], np.float32)) for v in (0.001, 1.0, 1.0))
    xs = [_t(20, seed=s, scale=2.0) for s in range(3)]
    ref_accum, ref_state = 1.0, 1.0
    for x in xs:
        out, scale, accum, state = Q.fake_quant_dequant_moving_average_abs_max(
            x, scale, accum, state, moving_rate=0.9)
        ref_state = 0.9 * ref_state + 1
        ref_accum = 0.9 * ref_accum + np.abs(x.numpy()).max()
        assert float(state) == pytest.approx(ref_state)
        assert float(scale) == pytest.approx(ref_accum / ref_state, rel=1e-6)
        _assert_on_grid(out.numpy(), float(scale))
        # values beyond the scale are clipped to it
        assert np.abs(out.numpy()).max() <= float(scale) * (1 + 1e-6)
    frozen = Q.fake_quant_dequant_moving_average_abs_max(
        xs[0] * 100, scale, accum, state, is_test=True)
    assert float(frozen[1]) == float(scale) and float(frozen[3]) == float(state)
    assert np.abs(frozen[0].numpy()).max() == pytest.approx(float(scale))


def test_straight_through_gradient():
    x = _t(4, 3, stop_gradient=False)
    w = _t(4, 3, seed=5)
    for fn in (lambda v: Q.fake_quant_dequant_abs_max(v)[0],
               lambda v: Q.fake_channel_wise_quant_dequant_abs_max(v, quant_axis=1)[0],
               lambda v: Q.fake_quant_dequant_moving_average_abs_max(
                   v, rt.ones([1]), rt.ones([1]), rt.ones([1]))[0]):
        (g,) = rt.grad([(fn(x) * w).sum()], [x])
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_op_errors():
    with pytest.raises(ValueError, match="bit_length"):
        Q.fake_quant_dequant_abs_max(rt.ones([2]), bit_length=1)
    with pytest.raises(ValueError, match=r"accum must hold one value, got shape \[2\]"):
        Q.fake_quant_dequant_moving_average_abs_max(rt.ones([3]), rt.ones([1]), rt.ones([2]),
                                                    rt.ones([1]))


# ---- models ---------------------------------------------------------------------------------

def _mlp():
    return rt.nn.Sequential(rt.nn.Linear(8, 32), rt.nn.ReLU(), rt.nn.Linear(32, 3))


def test_quantize_wraps_layers_copies_and_honours_skip_quant():
    model = _mlp()
    model[2].skip_quant = True
    qmodel = Q.QAT(Q.QuantConfig()).quantize(model)
    assert [type(m).__name__ for m in qmodel] == ["QuantedLinear", "ReLU", "Linear"]
    assert type(model[0]).__name__ == "Linear"  # the original is untouched
    assert qmodel[0].weight is not model[0].weight
    np.testing.assert_array_equal(qmodel[0].weight.numpy(), model[0].weight.numpy())
    keys = set(qmodel.state_dict())
    assert set(model.state_dict()) <= keys  # float checkpoints still load by name
    assert "0.activation_quanter.scale" in keys
    x = _t(16, 8, seed=2)
    ref = model(x).numpy()
    for _ in range(30):  # let the moving-average scale settle from its 0.001 start
        qmodel(x)
    got = qmodel.eval()(x).numpy()
    assert not np.array_equal(got, ref)
    np.testing.assert_allclose(got, ref, atol=0.05 * np.abs(ref).max())
    same = Q.QAT().quantize(model, inplace=True)
    assert same is model and type(model[0]).__name__ == "QuantedLinear"
    with pytest.raises(TypeError, match="single quantizable layer"):
        Q.QAT().quantize(rt.nn.Linear(2, 2))


def test_quanted_linear_matches_manual_fake_quant():
    lin = rt.nn.Linear(8, 4)
    qmodel = Q.QAT(Q.QuantConfig(activation_quantize_type="abs_max")).quantize(
        rt.nn.Sequential(lin))
    x = _t(5, 8, seed=3)
    qx, _ = Q.fake_quant_dequant_abs_max(x)
    qw, _ = Q.fake_channel_wise_quant_dequant_abs_max(qmodel[0].weight, quant_axis=1)
    want = qx.numpy() @ qw.numpy() + lin.bias.numpy()
    np.testing.assert_allclose(qmodel(x).numpy(), want, rtol=1e-5, atol=1e-6)


def test_quanted_conv2d():
    model = rt.nn.Sequential(rt.nn.Conv2D(3, 4, 3, padding=1), rt.nn.ReLU())
    qmodel = Q.QAT().quantize(model)
    assert type(qmodel[0]).__name__ == "QuantedConv2D"
    x = _t(2, 3, 6, 6, seed=4)
    got = qmodel(x)
    scale = float(qmodel[0].activation_quanter.scale)
    assert scale == pytest.approx((0.9 + np.abs(x.numpy()).max()) / 1.9, rel=1e-6)
    qx = Q.fake_quant_dequant_moving_average_abs_max(
        x, rt.to_tensor(np.array([scale], np.float32)), rt.ones([1]), rt.ones([1]),
        is_test=True)[0]
    qw, scales = Q.fake_channel_wise_quant_dequant_abs_max(model[0].weight, quant_axis=0)
    assert scales.shape == [4]
    want = F.relu(F.conv2d(qx, qw, model[0].bias, padding=1))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_quanted_conv2d_keeps_the_padding_mode():
    conv = rt.nn.Conv2D(2, 3, 3, padding=1, padding_mode="reflect")
    qmodel = Q.QAT().quantize(rt.nn.Sequential(conv))
    x = _t(1, 2, 5, 5, seed=5)
    got = qmodel(x)
    scale = float(qmodel[0].activation_quanter.scale)
    qx = Q.fake_quant_dequant_moving_average_abs_max(
        x, rt.to_tensor(np.array([scale], np.float32)), rt.ones([1]), rt.ones([1]),
        is_test=True)[0]
    qw, _ = Q.fake_channel_wise_quant_dequant_abs_max(conv.weight, quant_axis=0)
    want = F.conv2d(F.pad(qx, [1, 1, 1, 1], mode="reflect"), qw, conv.bias)
    assert got.shape == conv(x).shape == [1, 3, 5, 5]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_eval_mode_freezes_activation_scale():
    qmodel = Q.QAT().quantize(_mlp())
    qmodel(_t(4, 8))
    scale = float(qmodel[0].activation_quanter.scale)
    qmodel.eval()
    qmodel(_t(4, 8, scale=50.0, seed=9))
    assert float(qmodel[0].activation_quanter.scale) == scale
    qmodel.train()
    qmodel(_t(4, 8, scale=50.0, seed=9))
    assert float(qmodel[0].activation_quanter.scale) > scale


def _blobs(n=120):
    """Train and test sets drawn around the same three centres."""
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((3, 8)) * 1.5
    out = []
    for _ in range(2):
        y = rng.integers(0, 3, n)
        x = centers[y] + rng.standard_normal((n, 8))
        out += [rt.to_tensor(x.astype(np.float32)), rt.to_tensor(y.astype(np.int64))]
    return out


def _fit(model, x, y, steps=40):
    opt = rt.optimizer.Adam(0.02, parameters=model.parameters())
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def _accuracy(model, x, y):
    return float((model(x).numpy().argmax(1) == y.numpy()).mean())


def test_qat_training_and_convert_stay_close_to_float():
    x, y, xt, yt = _blobs()
    base = _mlp()
    float_model = _mlp()
    float_model.set_state_dict(base.state_dict())
    qat = Q.QAT(Q.QuantConfig())
    qmodel = qat.quantize(base)
    float_losses = _fit(float_model, x, y)
    q_losses = _fit(qmodel, x, y)
    assert q_losses[-1] < 0.3 * q_losses[0]
    assert abs(q_losses[-1] - float_losses[-1]) < 0.05
    float_acc = _accuracy(float_model.eval(), xt, yt)
    q_acc = _accuracy(qmodel.eval(), xt, yt)
    assert float_acc > 0.8 and q_acc >= float_acc - 0.05

    infer = qat.convert(qmodel)
    assert not infer.training and qmodel[0].weight_quanter is not None  # a copy by default
    w, s = infer[0].weight.numpy(), infer[0].weight_scale.numpy()
    assert w.dtype == np.int8 and np.abs(w).max() <= 127  # int8 weights (runtime/quantization)
    _assert_on_grid(infer[0].dequantized_weight().numpy(), s.reshape(1, -1))
    np.testing.assert_allclose(infer(xt).numpy(), qmodel(xt).numpy(), rtol=1e-4, atol=1e-4)
    before = infer[0].activation_scale.numpy().copy()
    infer(xt * 10)
    np.testing.assert_array_equal(infer[0].activation_scale.numpy(), before)  # fixed for good


def test_quantized_state_dict_round_trip(tmp_path):
    qat = Q.QAT()
    a = qat.quantize(_mlp())
    a(_t(4, 8))
    rt.save(a.state_dict(), tmp_path / "q.pdparams")
    b = qat.quantize(_mlp())
    b.set_state_dict(rt.load(tmp_path / "q.pdparams"))
    x = _t(3, 8, seed=7)
    np.testing.assert_array_equal(a.eval()(x).numpy(), b.eval()(x).numpy())


def test_config_errors():
    with pytest.raises(ValueError, match="weight_quantize_type"):
        Q.QuantConfig(weight_quantize_type="range_abs_max")
    with pytest.raises(ValueError, match="weight_bits"):
        Q.QuantConfig(weight_bits=1)
    with pytest.raises(ValueError, match="cannot quantize layer types"):
        Q.QuantConfig(quantizable_layer_type=["LSTM"])
    with pytest.raises(ValueError, match="no quantized layers"):
        Q.QAT().convert(_mlp())


def _bars(n, rng):
    """8x8 images with one horizontal (class 0) or vertical (class 1) bar, plus noise."""
    x = rng.standard_normal((n, 1, 8, 8)).astype(np.float32) * 0.3
    y = rng.integers(0, 2, n)
    for i, r in enumerate(rng.integers(1, 7, n)):
        if y[i]:
            x[i, 0, :, r] += 1.5
        else:
            x[i, 0, r, :] += 1.5
    return rt.to_tensor(x), rt.to_tensor(y.astype(np.int64))


def test_qat_conv_model_trains_like_float():
    if not hasattr(rt.nn, "Conv2D") or not hasattr(rt.nn, "MaxPool2D"):
        pytest.skip("rt.nn.Conv2D / MaxPool2D are not available yet")
    rng = np.random.default_rng(0)
    (x, y), (xt, yt) = _bars(64, rng), _bars(64, rng)

    def net():
        return rt.nn.Sequential(rt.nn.Conv2D(1, 4, 3, padding=1), rt.nn.ReLU(),
                                rt.nn.MaxPool2D(2), rt.nn.Flatten(), rt.nn.Linear(64, 2))

    float_model = net()
    qmodel = Q.QAT().quantize(float_model)
    assert type(qmodel[0]).__name__ == "QuantedConv2D"
    float_losses = _fit(float_model, x, y, steps=30)
    q_losses = _fit(qmodel, x, y, steps=30)
    assert q_losses[-1] < 0.05 and float_losses[-1] < 0.05
    assert _accuracy(qmodel.eval(), xt, yt) >= _accuracy(float_model.eval(), xt, yt) - 0.05
