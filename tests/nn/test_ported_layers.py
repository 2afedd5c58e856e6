"""Layers that ported Paddle scripts use (PReLU, SiLU, CosineSimilarity, PixelShuffle, Unfold,
MarginRankingLoss) and `nn.utils.clip_grad_norm_`: eager vs `d2s.to_static` vs NumPy, with
inputs that take both branches of one converted program, and gradients vs central
differences. The functional forms have OpInfos in tests/ops/opinfo_nn_patches_attention.py."""
from __future__ import annotations

import numpy as np
import pytest
from layer_gradcheck import check_grads

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn
from runtime.static import InputSpec


class SuperResolutionHead(nn.Layer):
    """Sub-pixel upsampling as ESPCN writes it, with a data-dependent gate."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(2, 8, 3, padding=1)
        self.act = nn.PReLU(num_parameters=8)
        self.shuffle = nn.PixelShuffle(2)
        self.unfold = nn.Unfold(kernel_sizes=2, strides=2)
        self.silu = nn.SiLU()

    def forward(self, x):
        y = self.shuffle(self.act(self.conv(x)))  # [N, 2, 2H, 2W]
        if y.mean() > 0:
            y = self.silu(y)
        else:
            y = -y
        return self.unfold(y)  # [N, 8, H*W]


def _silu(x):
    return x / (1 + np.exp(-x))


def _head_ref(model, x):
    w, b = model.conv.weight.numpy().astype(np.float64), model.conv.bias.numpy()
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    n, _, h, wd = x.shape
    conv = np.zeros((n, 8, h, wd))
    for i in range(h):
        for j in range(wd):
            conv[:, :, i, j] = np.einsum("ncij,ocij->no", xp[:, :, i:i + 3, j:j + 3], w) + b
    slope = model.act.weight.numpy().reshape(1, -1, 1, 1)
    act = np.where(conv > 0, conv, slope * conv)
    up = act.reshape(n, 2, 2, 2, h, wd).transpose(0, 1, 4, 2, 5, 3).reshape(n, 2, 2 * h, 2 * wd)
    positive = up.mean() > 0
    up = _silu(up) if positive else -up
    cols = up.reshape(n, 2, h, 2, wd, 2).transpose(0, 1, 3, 5, 2, 4)  # [N, C, ki, kj, H, W]
    return cols.reshape(n, 8, h * wd), positive


def test_superresolution_head_eager_static_numpy_on_both_branches():
    rt.seed(3)
    model = SuperResolutionHead()
    static = d2s.to_static(model)
    rng = np.random.default_rng(0)
    for sign in (1.0, -1.0):  # one input per branch of the converted `if`
        x = sign * np.abs(rng.standard_normal((2, 2, 3, 4))).astype(np.float32)
        model.conv.bias.set_value(np.full([8], 3.0 * sign, np.float32))
        eager = model(rt.to_tensor(x)).numpy()
        converted = static(rt.to_tensor(x)).numpy()
        want, positive = _head_ref(model, x.astype(np.float64))
        assert positive == (sign > 0)
        np.testing.assert_allclose(eager, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(converted, eager, rtol=1e-6, atol=1e-6)


def test_prelu_gradients_of_input_and_slopes_match_finite_differences():
    layer = nn.PReLU(num_parameters=3, init=0.1, data_format="NHWC")
    layer.to(dtype="float64")
    x = np.random.default_rng(1).standard_normal((2, 2, 2, 3))
    check_grads(layer, [x], params=list(layer.parameters()))
    shared = nn.PReLU().to(dtype="float64")
    assert shared.weight.shape == [1] and shared.weight.numpy()[0] == 0.25
    check_grads(shared, [x], params=list(shared.parameters()))


def test_silu_is_silu_and_cosine_similarity_layer():
    assert nn.SiLU is nn.Silu
    x = np.array([[1.0, 2.0, 2.0], [0.0, 3.0, -4.0]])
    y = np.array([[2.0, 4.0, 4.0], [1.0, 0.0, 0.0]])
    sim = nn.CosineSimilarity(axis=1)
    got = sim(rt.to_tensor(x), rt.to_tensor(y)).numpy()
    np.testing.assert_allclose(got, [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(nn.CosineSimilarity(axis=0)(rt.to_tensor(x), rt.to_tensor(y))
                               .numpy(), (x * y).sum(0) / np.linalg.norm(x, axis=0)
                               / np.linalg.norm(y, axis=0))


class RankNet(nn.Layer):
    """A pairwise ranking model: one scorer for both items, hinge on the score difference."""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(4, 1)
        self.loss = nn.MarginRankingLoss(margin=0.1)

    def forward(self, a, b, label):
        return self.loss(self.score(a), self.score(b), label)


def test_margin_ranking_loss_layer_eager_static_numpy_and_gradients():
    rt.seed(0)
    model = RankNet()
    model.to(dtype="float64")
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    label = rng.choice([-1.0, 1.0], size=(6, 1))
    w, bias = model.score.weight.numpy(), model.score.bias.numpy()
    want = np.maximum(0, -label * ((a @ w + bias) - (b @ w + bias)) + 0.1).mean()
    eager = model(*(rt.to_tensor(v) for v in (a, b, label))).item()
    converted = d2s.to_static(model)(*(rt.to_tensor(v) for v in (a, b, label))).item()
    assert eager == pytest.approx(want, rel=1e-12)
    assert converted == pytest.approx(eager, rel=1e-12)
    check_grads(model, [a, b, label.copy()], params=list(model.parameters()))
    with pytest.raises(ValueError, match="MarginRankingLoss: reduction must be"):
        nn.MarginRankingLoss(reduction="avg")


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_scales_gradients_in_place_of_the_parameters(norm_type):
    rt.seed(0)
    model = nn.Linear(3, 2)
    x = rt.to_tensor(np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32))
    (d2s.to_static(model)(x) * 10.0).sum().backward()  # a converted forward, eager backward
    grads = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
    flat = np.concatenate([g.ravel() for g in grads])
    total = np.abs(flat).max() if norm_type == float("inf") else (
        (np.abs(flat) ** norm_type).sum() ** (1 / norm_type))
    assert total > 1.0
    got = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=norm_type)
    assert got.item() == pytest.approx(total, rel=1e-5)
    params = model.parameters()
    assert len(params) == len(grads)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g / (total + 1e-6), rtol=1e-5)


def test_clip_grad_norm_leaves_small_gradients_and_skips_missing_ones():
    w = rt.create_parameter([2], "float32")
    unused = rt.create_parameter([3], "float32")
    (w * rt.to_tensor([0.3, 0.4])).sum().backward()
    total = nn.utils.clip_grad_norm_([w, unused], max_norm=1.0)
    assert total.item() == pytest.approx(0.5)
    np.testing.assert_allclose(w.grad.numpy(), [0.3, 0.4], rtol=1e-6)
    assert unused.grad is None
    assert nn.utils.clip_grad_norm_([unused], 1.0).item() == 0.0
    (w * float("nan")).sum().backward()
    with pytest.raises(RuntimeError, match="clip_grad_norm_: the total 2.0 norm"):
        nn.utils.clip_grad_norm_(w, 1.0, error_if_nonfinite=True)


def _converted(fn, *specs):
    return d2s.to_static(fn, input_spec=[InputSpec(shape, dtype) for shape, dtype in specs])


def test_unknown_batch_serves_two_batch_sizes_and_unknown_image_sizes_are_refused():
    rng = np.random.default_rng(5)
    unfold = _converted(lambda x: F.unfold(x, 2, strides=2), ([None, 2, 4, 6], "float32"))
    attend = _converted(lambda q: F.scaled_dot_product_attention(q, q, q),
                        ([None, None, 2, 4], "float32"))
    gate = _converted(lambda x: F.glu(x, axis=1), ([None, None, 3], "float32"))
    for batch in (1, 3):
        x = rng.standard_normal((batch, 2, 4, 6)).astype(np.float32)
        np.testing.assert_allclose(unfold(rt.to_tensor(x)).numpy(),
                                   F.unfold(rt.to_tensor(x), 2, strides=2).numpy())
        q = rng.standard_normal((batch, batch + 2, 2, 4)).astype(np.float32)
        np.testing.assert_allclose(attend(rt.to_tensor(q)).numpy(),
                                   F.scaled_dot_product_attention(*[rt.to_tensor(q)] * 3)
                                   .numpy(), rtol=1e-5, atol=1e-6)
        g = rng.standard_normal((batch, 2 * batch, 3)).astype(np.float32)
        np.testing.assert_allclose(gate(rt.to_tensor(g)).numpy(),
                                   F.glu(rt.to_tensor(g), axis=1).numpy())
    x = rt.to_tensor(rng.standard_normal((1, 2, 4, 6)).astype(np.float32))
    with pytest.raises(ValueError, match=r"unfold: x has shape \[-1, 2, -1, -1\]; its "
                                         r"channels, height and width must be known"):
        _converted(lambda x: F.unfold(x, 2), ([None, 2, None, None], "float32"))(x)
    grid = rt.to_tensor(rng.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32))
    with pytest.raises(ValueError, match=r"grid_sample: x has shape \[-1, 2, -1, -1\] and "
                                         r"grid \[-1, 3, 3, 2\]; all but the batch dim"):
        _converted(lambda x, g: F.grid_sample(x, g), ([None, 2, None, None], "float32"),
                   ([None, 3, 3, 2], "float32"))(x, grid)
    q = rt.to_tensor(rng.standard_normal((1, 3, 2, 4)).astype(np.float32))
    with pytest.raises(ValueError, match="scaled_dot_product_attention: is_causal needs the "
                                         "sequence lengths"):
        _converted(lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=True),
                   ([None, None, 2, 4], "float32"))(q)
