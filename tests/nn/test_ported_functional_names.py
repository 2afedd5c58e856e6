"""The `rt.nn` / `F` names ported scripts call that session 24 added, in the models that use
them: a metric-learning head (pairwise distances, triplet, cosine-embedding and focal losses,
with a hard-negative branch decided by a tensor), and a vocoder's upsampling block
(Conv1DTranspose, SELU, Softshrink, ChannelShuffle-style grouping). Eager vs converted vs
NumPy over inputs that take both branches of one program, and a few training steps with
momentum and weight decay compared parameter by parameter."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F


class MetricHead(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = rt.nn.Linear(4, 3)
        self.act = rt.nn.CELU(alpha=0.5)
        self.dist = rt.nn.PairwiseDistance(p=2.0)
        self.triplet = rt.nn.TripletMarginLoss(margin=0.5)
        self.cosine = rt.nn.CosineEmbeddingLoss(margin=0.1)

    def forward(self, anchor, positive, negative, same, target):
        a, p, n = (self.act(self.proj(t)) for t in (anchor, positive, negative))
        d_ap, d_an = self.dist(a, p), self.dist(a, n)
        if (d_an < d_ap).any():  # hard negatives present: swap in the positive's distance
            loss = F.triplet_margin_loss(a, p, n, margin=0.5, swap=True)
        else:
            loss = self.triplet(a, p, n)
        loss = loss + self.cosine(a, p, same)
        logits = (a * p).sum(-1)
        loss = loss + F.sigmoid_focal_loss(logits, target, normalizer=target.sum() + 1.0)
        return loss, d_ap, rt.nn.Hardshrink(0.2)(a - p)


def _numpy_head(w, b, anchor, positive, negative, same, target):
    def emb(t):
        z = t @ w + b
        return np.maximum(z, 0) + np.minimum(0, 0.5 * np.expm1(z / 0.5))

    def dist(x, y):
        return np.sqrt(((x - y + 1e-6) ** 2).sum(-1))

    a, p, n = emb(anchor), emb(positive), emb(negative)
    d_ap, d_an = dist(a, p), dist(a, n)
    far = np.minimum(d_an, dist(p, n)) if (d_an < d_ap).any() else d_an
    loss = np.maximum(d_ap - far + 0.5, 0).mean()
    cos = (a * p).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-11) * ((p * p).sum(-1) + 1e-11))
    loss += np.where(same == 1, 1 - cos, np.maximum(cos - 0.1, 0)).mean()
    logit = (a * p).sum(-1)
    prob = 1 / (1 + np.exp(-logit))
    ce = np.maximum(logit, 0) - logit * target + np.log1p(np.exp(-np.abs(logit)))
    p_t = prob * target + (1 - prob) * (1 - target)
    alpha_t = 0.25 * target + 0.75 * (1 - target)
    loss += (ce * (1 - p_t) ** 2 * alpha_t / (target.sum() + 1)).sum()
    diff = a - p
    return loss, d_ap, np.where(np.abs(diff) > 0.2, diff, 0)


def _batch(seed, hard):
    rng = np.random.default_rng(seed)
    anchor = rng.standard_normal((5, 4))
    positive = anchor + 0.1 * rng.standard_normal((5, 4))
    negative = (anchor + 0.05 * rng.standard_normal((5, 4)) if hard
                else anchor + 3.0 + rng.standard_normal((5, 4)))
    same = np.array([1, -1, 1, 1, -1])
    target = rng.integers(0, 2, 5).astype(np.float64)
    return anchor, positive, negative, same, target


BATCHES = [_batch(0, hard=True), _batch(1, hard=False)]


def _head(seed=7):
    rt.seed(seed)
    head = MetricHead()
    head.to(dtype="float64")
    return head


@pytest.mark.parametrize("convert", [False, True])
def test_metric_head_matches_numpy_eager_and_converted(convert):
    head = _head()
    fn = d2s.to_static(head) if convert else head
    w, b = head.proj.weight.numpy(), head.proj.bias.numpy()
    for batch in BATCHES:
        got = fn(*(rt.to_tensor(v) for v in batch))
        want = _numpy_head(w, b, *batch)
        assert len(got) == len(want)
        for g, v in zip(got, want):
            assert g.dtype == "float64"
            np.testing.assert_allclose(g.numpy(), v, rtol=1e-9, atol=1e-12)
    if convert:
        assert len(head.forward.program_cache) == 1


def _train(convert: bool, steps: int = 3):
    head = _head()
    fn = d2s.to_static(head) if convert else head
    opt = rt.optimizer.Momentum(0.05, momentum=0.9, parameters=head.parameters(),
                                weight_decay=0.01)
    for step in range(steps):
        loss = fn(*(rt.to_tensor(v) for v in BATCHES[step % 2]))[0]
        loss.backward()
        opt.step()
        opt.clear_grad()
    return {k: v.numpy() for k, v in head.state_dict().items()}


def test_training_steps_agree_eager_and_converted():
    eager, static = _train(False), _train(True)
    assert sorted(eager) == sorted(static)
    for k in eager:
        np.testing.assert_allclose(static[k], eager[k], rtol=1e-9, atol=1e-12, err_msg=k)


class Upsampler(rt.nn.Layer):
    """A vocoder block: transposed convolution x2, SELU, a soft threshold on loud frames."""

    def __init__(self):
        super().__init__()
        self.up = rt.nn.Conv1DTranspose(4, 4, 4, stride=2, padding=1, groups=2)
        self.act = rt.nn.SELU()
        self.shrink = rt.nn.Softshrink(0.1)

    def forward(self, mel):
        h = self.act(self.up(mel))
        if h.abs().mean() > 1.0:
            h = self.shrink(h)
        return F.channel_shuffle(h.unsqueeze(-1), 2).squeeze(-1)


def test_upsampler_eager_converted_and_gradients():
    rt.seed(3)
    block = Upsampler()
    block.to(dtype="float64")
    static = d2s.to_static(Upsampler())
    static.to(dtype="float64")
    static.set_state_dict(block.state_dict())
    for scale in (0.1, 20.0):  # quiet and loud: both branches of one program
        mel = np.random.default_rng(0).standard_normal((2, 4, 6)) * scale
        outs = []
        for model in (block, static):
            x = rt.to_tensor(mel, stop_gradient=False)
            out = model(x)
            (out * out).sum().backward()
            outs.append((out.numpy(), x.grad.numpy(),
                         model.up.weight.grad.numpy().copy()))
            model.clear_gradients()
        for e, s in zip(*outs):
            np.testing.assert_allclose(s, e, rtol=1e-9, atol=1e-12)
        assert outs[0][0].shape == (2, 4, 12)
    assert len(static.forward.program_cache) == 1


@pytest.mark.parametrize("convert", [False, True])
def test_dropout2d_zeroes_whole_channels(convert):
    def drop(x, training):
        return F.dropout2d(x, 0.5, training=training), rt.nn.Dropout3D(0.5)(x.unsqueeze(2))

    fn = d2s.to_static(drop) if convert else drop
    rt.seed(11)
    out2d, out3d = fn(rt.ones([4, 8, 3, 3]), True)
    for out in (out2d.numpy(), out3d.numpy()):
        per_channel = out.reshape(4, 8, -1)
        assert (per_channel.min(-1) == per_channel.max(-1)).all()  # one value per channel
        assert set(np.unique(per_channel)) <= {0.0, 2.0}
        assert 0 < (per_channel[..., 0] == 0).mean() < 1
    kept, _ = fn(rt.ones([4, 8, 3, 3]), False)
    np.testing.assert_array_equal(kept.numpy(), np.ones((4, 8, 3, 3)))


@pytest.mark.parametrize("convert", [False, True])
def test_gumbel_softmax_samples_and_gradients(convert):
    def sample(logits, hard):
        return F.gumbel_softmax(logits, temperature=0.5, hard=hard, axis=-1)

    fn = d2s.to_static(sample) if convert else sample
    rt.seed(5)
    logits0 = np.log(np.array([[0.7, 0.2, 0.1]] * 4000))
    logits = rt.to_tensor(logits0, stop_gradient=False)
    soft = fn(logits, False)
    np.testing.assert_allclose(soft.numpy().sum(-1), 1.0, rtol=1e-12)
    hard = fn(logits, True)
    assert set(np.unique(hard.numpy())) == {0.0, 1.0}
    np.testing.assert_array_equal(hard.numpy().sum(-1), 1.0)
    freq = hard.numpy().mean(0)  # a Gumbel-max sample picks each class with its probability
    np.testing.assert_allclose(freq, [0.7, 0.2, 0.1], atol=0.03)
    (hard * rt.to_tensor([1.0, 2.0, 3.0], dtype="float64")).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0  # straight-through


@pytest.mark.parametrize("convert", [False, True])
def test_alpha_dropout_keeps_selu_statistics(convert):
    def drop(x, training):
        return F.alpha_dropout(x, 0.2, training=training)

    fn = d2s.to_static(drop) if convert else drop
    rt.seed(2)
    x = rt.randn([100000], dtype="float64")
    out = fn(x, True).numpy()
    alpha_p, p = -1.6732632423543772 * 1.0507009873554805, 0.2
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(out, alpha_p * a - a * alpha_p * p, rtol=0, atol=1e-12).mean()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02
    assert 0.15 < dropped < 0.25
    np.testing.assert_array_equal(fn(x, False).numpy(), x.numpy())


@pytest.mark.parametrize("convert", [False, True])
def test_gaussian_nll_loss_refuses_a_negative_variance_when_it_runs(convert):
    def nll(mean, target, var):
        return rt.nn.GaussianNLLLoss(full=True)(mean, target, var)

    fn = d2s.to_static(nll) if convert else nll
    mean, target = rt.to_tensor([0.5, 1.0]), rt.to_tensor([0.0, 1.5])
    want = np.mean(0.5 * (np.log([2.0, 0.5]) + np.array([0.25, 0.25]) / [2.0, 0.5])
                   + 0.5 * np.log(2 * np.pi))
    np.testing.assert_allclose(fn(mean, target, rt.to_tensor([2.0, 0.5])).item(), want,
                               rtol=1e-6)
    with pytest.raises(ValueError, match="gaussian_nll_loss: variance has negative entries"):
        fn(mean, target, rt.to_tensor([2.0, -0.5]))
    np.testing.assert_allclose(fn(mean, target, rt.to_tensor([2.0, 0.5])).item(), want,
                               rtol=1e-6)  # the same program runs on
